// The rp suite's binding of the one check wrapper (harness/run/check.ts): its checks drive a Session.
import { once, sessionCheck, suiteProperty, Expect, type CheckSpec, type SuitePropertySpec } from '../../run/check.ts';
import type { Check } from '../../run/model.ts';
import { Session, type RpTarget } from './driver.ts';

export { Expect, once };

export type RpCheckSpec = CheckSpec<Session>;

export function rpCheck(target: RpTarget, spec: RpCheckSpec): Check {
  return sessionCheck({ suite: 'rp', open: (signal) => new Session(target, signal) }, spec);
}

export function rpProperty<T>(spec: SuitePropertySpec<T>): Check {
  return suiteProperty('rp', spec);
}
