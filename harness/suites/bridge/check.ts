// The bridge suite's binding of the one check wrapper (harness/run/check.ts): its checks drive a
// BridgeSession; a signer that refuses what the bridge asked it to sign is a failure too.
import { SignerError } from '../../actors/signer/index.ts';
import { sessionCheck, Expect, type CheckSpec } from '../../run/check.ts';
import type { Check } from '../../run/model.ts';
import { BridgeSession, type BridgeTarget } from './driver.ts';

export { Expect };

export type BridgeCheckSpec = CheckSpec<BridgeSession>;

export function bridgeCheck(target: BridgeTarget, spec: BridgeCheckSpec): Check {
  return sessionCheck({ suite: 'bridge', open: (signal) => new BridgeSession(target, signal), failures: [SignerError] }, spec);
}
