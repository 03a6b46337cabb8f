// The relay suite's binding of the one check wrapper (harness/run/check.ts): its checks drive a Session.
import { sessionCheck, suiteProperty, Expect, type CheckSpec, type SuitePropertySpec } from '../../run/check.ts';
import type { Check } from '../../run/model.ts';
import { Session, type RelayTarget } from './driver.ts';

export { Expect };

export type RelayCheckSpec = CheckSpec<Session>;

export function relayCheck(target: RelayTarget, spec: RelayCheckSpec): Check {
  return sessionCheck({ suite: 'relay', open: (signal) => new Session(target, signal) }, spec);
}

export function relayProperty<T>(spec: SuitePropertySpec<T>): Check {
  return suiteProperty('relay', spec);
}
