// The `relay` suite: checks any relay of document 3 over the network (HTTP to the relay and its
// peer, the test authority for DNS and documents). Every check makes its own identities, cites the
// rules its assertions decide (document rules, or only project decisions: a profile check), and
// keeps the HTTP exchanges as evidence.
import type { Check, SuiteLoad } from '../../run/model.ts';
import { ConfigError } from '../../run/exit.ts';
import { HttpClient } from '../../actors/http.ts';
import type { RelayTarget } from './driver.ts';
import { messagingChecks } from './checks/messaging.ts';
import { authChecks, challengeExpiryCheck } from './checks/auth.ts';
import { authCodesCheck, headerPartsCheck, replayWindowCheck } from './checks/auth-headers.ts';
import { relayFuzzChecks } from './checks/fuzz.ts';
import { identityChecks } from './checks/identities.ts';
import { eventChecks } from './checks/events.ts';
import { spoolChecks } from './checks/spool.ts';
import { limitChecks } from './checks/limits.ts';
import { propertyChecks } from './checks/properties.ts';
import { profileChecks } from './checks/profile.ts';
import { keystoreChecks } from './checks/keystore.ts';
import { keystoreFieldChecks } from './checks/keystore-fields.ts';
import { keystoreRemovalChecks } from './checks/keystore-removal.ts';
import { pairingChecks } from './checks/pairing.ts';
import { pairingFieldsCheck, pairingFieldsProfileCheck } from './checks/pairing-fields.ts';
import { envelopeFormsCheck, envelopeFormsProfileCheck } from './checks/envelope-forms.ts';
import { ackForwardCheck, forwardRefusedProfileCheck, recipientCaseProfileCheck, unknownSenderCheck } from './checks/forwarding.ts';
import { systemFileChecks } from './checks/system-files.ts';
import { systemEtagCheck } from './checks/system-etag.ts';
import { capabilitiesShapeCheck } from './checks/capabilities-shape.ts';
import { promptChecks } from './checks/prompts.ts';
import { ownerWhoChecks } from './checks/owner-who.ts';
import { keystoreMatrixChecks } from './checks/keystore-matrix.ts';
import { pairingMatrixChecks } from './checks/pairing-matrix.ts';
import { pairingCodeFormChecks } from './checks/pairing-code-forms.ts';
import { devicesMatrixChecks } from './checks/devices-matrix.ts';
import { ownerProfileMatrixChecks } from './checks/owner-profile-matrix.ts';
import { matrixWhoChecks } from './checks/matrix-who.ts';
import { matrixBindingChecks } from './checks/matrix-binding.ts';
import { matrixOrderChecks } from './checks/matrix-order.ts';
import { matrixWindowChecks } from './checks/matrix-windows.ts';
import { matrixLimitChecks } from './checks/matrix-limits.ts';
import { matrixOnceChecks } from './checks/matrix-once.ts';
import { onceRaceChecks } from './checks/once-races.ts';
import { cursorConsumeAcks, cursorLifecycle } from './checks/cursor-lifecycle.ts';
import { registerBinding } from './checks/register-binding.ts';
import { capabilitiesDefaultsCheck, notHostedCheck, profileIdentityRecordCheck, registerMalformedCheck, registerPartsCheck, rotateDocumentCheck } from './checks/identities-parts.ts';
import { namesMatrix } from './checks/names-matrix.ts';
import { matrixLifecycleChecks } from './checks/matrix-lifecycle.ts';
import { sessionsMatrixChecks } from './checks/sessions-matrix.ts';
import { signingMatrixChecks } from './checks/signing-matrix.ts';

export type { RelayTarget } from './driver.ts';

export async function relaySuite(target: RelayTarget): Promise<SuiteLoad> {
  await reachable(target);
  return { checks: relayChecks(target), skipped: [], coverageDocs: [3] };
}

/** Every check of the suite, built without touching the network (the matrix lists them against a placeholder target). */
export function relayChecks(target: RelayTarget): Check[] {
  return [
    ...identityChecks(target),
    ...authChecks(target),
    headerPartsCheck(target),
    authCodesCheck(target),
    replayWindowCheck(target),
    ...messagingChecks(target),
    envelopeFormsCheck(target),
    envelopeFormsProfileCheck(target),
    ackForwardCheck(target),
    unknownSenderCheck(target),
    forwardRefusedProfileCheck(target),
    recipientCaseProfileCheck(target),
    ...eventChecks(target),
    ...limitChecks(target),
    ...spoolChecks(target),
    ...propertyChecks(target),
    ...profileChecks(target),
    ...keystoreChecks(target),
    ...keystoreFieldChecks(target),
    ...keystoreRemovalChecks(target),
    ...pairingChecks(target),
    pairingFieldsCheck(target),
    pairingFieldsProfileCheck(target),
    ...systemFileChecks(target),
    systemEtagCheck(target),
    capabilitiesShapeCheck(target),
    ...promptChecks(target),
    ...ownerWhoChecks(target),
    ...keystoreMatrixChecks(target),
    ...pairingMatrixChecks(target),
    ...pairingCodeFormChecks(target),
    ...devicesMatrixChecks(target),
    ...ownerProfileMatrixChecks(target),
    ...matrixWhoChecks(target),
    ...matrixBindingChecks(target),
    ...matrixOrderChecks(target),
    ...matrixWindowChecks(target),
    ...matrixLimitChecks(target),
    ...matrixOnceChecks(target),
    ...onceRaceChecks(target),
    cursorLifecycle(target),
    cursorConsumeAcks(target),
    registerBinding(target),
    registerPartsCheck(target),
    registerMalformedCheck(target),
    rotateDocumentCheck(target),
    notHostedCheck(target),
    profileIdentityRecordCheck(target),
    capabilitiesDefaultsCheck(target),
    namesMatrix(target),
    ...matrixLifecycleChecks(target),
    ...sessionsMatrixChecks(target),
    ...signingMatrixChecks(target),
    challengeExpiryCheck(target),
    ...relayFuzzChecks(target),
  ];
}

/** The relay must answer at all: otherwise the run tests nothing (exit 2), not 40 failures. */
async function reachable(t: RelayTarget): Promise<void> {
  const client = new HttpClient({ timeoutMs: 10_000 });
  try {
    for (const url of [t.url, ...(t.peerUrl ? [t.peerUrl] : [])]) {
      try {
        await client.get(`${url}/health`);
      } catch (error) {
        throw new ConfigError(`the relay at ${url} cannot be reached: ${(error as Error).message}`);
      }
    }
  } finally {
    await client.close();
  }
}
