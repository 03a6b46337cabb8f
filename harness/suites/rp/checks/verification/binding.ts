// The approval answers the request the RP issued (project decisions, ns.delivery.request-binding), and
// the statement edited after signing (rule 7).
import { randomBytes } from 'node:crypto';
import type { Profile } from '../../../../../protocol/common/profile.ts';
import { encodeBase64url } from '../../../../../protocol/common/base64.ts';
import { isoShift } from '../../driver.ts';
import { type Scenario, signedWith, R } from './scenario.ts';

function bindingWindowNotCopiedScenario(_profile: Profile): Scenario {
  return {
    name: 'binding/window-not-copied',
    title: 'an approval whose window differs from the request (re-signed) is refused',
    rules: ['ns.delivery.request-binding'],
    context: ['ns.response.window-copied'],
    expect: R(400, 'request_mismatch'),
    build: (m) => signedWith(m, { issued_at: isoShift(m.request.issued_at, 1) }),
  };
}

function bindingNonceChangedScenario(_profile: Profile): Scenario {
  return {
    name: 'binding/nonce-changed',
    title: 'an approval with another nonce (re-signed) is refused',
    rules: ['ns.delivery.request-binding'],
    context: ['ns.request.nonce'],
    expect: R(400, 'request_mismatch'),
    build: (m) => signedWith(m, { nonce: encodeBase64url(randomBytes(24)) }),
  };
}

function rule7StatementEditedScenario(_profile: Profile): Scenario {
  return {
    name: '7/statement-edited',
    title: 'a statement edited after signing is refused',
    rules: ['ns.verify.7'],
    context: ['ns.canonical.lines'],
    expect: R(400, 'request_mismatch', 'signature_invalid'),
    start: { statement: 'Sign in to the conformance test' },
    cells: [{ rule: 'ns.verify.7', facet: 'binding', value: 'statement' }],
    build: (m) => ({ ...m.genuine, statement: 'Transfer everything' }),
  };
}

function bindingUnknownTransactionScenario(_profile: Profile): Scenario {
  return {
    name: 'binding/unknown-transaction',
    title: 'an approval for a request_id this RP never issued (re-signed) is refused',
    rules: ['ns.delivery.unknown-transaction'],
    expect: R(409, 'unknown_transaction'),
    build: (m) => signedWith(m, { request_id: `never-${encodeBase64url(randomBytes(12))}` }),
  };
}

/** In the order the checks run. */
export function bindingScenarios(profile: Profile): Scenario[] {
  return [bindingWindowNotCopiedScenario(profile), bindingNonceChangedScenario(profile), rule7StatementEditedScenario(profile), bindingUnknownTransactionScenario(profile)];
}
