// Acceptance scenarios (ns.auth.2, the canonical string, encodings): approvals an RP must accept.
import { randomBytes } from 'node:crypto';
import type { Profile } from '../../../../../protocol/common/profile.ts';
import { publicKeyFromSeed } from '../../../../../protocol/common/ed25519.ts';
import { decodeBase64Any } from '../../../../../protocol/common/base64.ts';
import { formatKey } from '../../../../../protocol/common/keys.ts';
import { formatRfc3339 } from '../../../../../protocol/common/time.ts';
import { vocabulary } from '../../../../../schemas/ts/vocabulary.ts';
import { type Scenario, now, session, sessionApproval } from './scenario.ts';

function acceptIdentityKeyScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/identity-key',
    title: 'an approval signed by the identity key completes the login',
    rules: ['ns.auth.2', 'ns.verify.6', 'ns.verify.7', 'ns.canonical.format', 'ns.canonical.lines', 'ns.response.fields', 'ns.response.key-id'],
    context: ['ns.resolve.chain', 'ns.identity-document.format'],
    accept: true,
    cells: [{ rule: 'ns.auth.2', facet: 'who', value: 'identity-key' }],
    build: (m) => m.genuine,
  };
}

function acceptSessionKeyScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/session-key',
    title: 'an approval signed by a session key with its proof completes the login, with the same scopes and window',
    rules: [
      'ns.auth.2',
      'ns.auth.2.same-scope-window',
      'ns.session-proof.fields',
      'ns.session-proof.signed-lines',
      'ns.session-proof.signature',
      'ns.session-proof.validation',
      'ns.response.session-proof-presence',
    ],
    context: ['ns.response.key-id'],
    start: { scopes: [...vocabulary.scopes.values] },
    accept: true,
    cells: [{ rule: 'ns.auth.2', facet: 'who', value: 'session-key' }],
    build: (m) => sessionApproval(m, session(m)),
  };
}

function acceptLoginOnlyScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/login-only',
    title: 'a login-only approval (empty scopes line) without a statement completes the login',
    rules: ['ns.canonical.statement-empty', 'ns.canonical.scopes-joined', 'ns.request.scopes-login-only'],
    start: { scopes: [], statement: '' },
    accept: true,
    build: (m) => m.genuine,
  };
}

function acceptScopesScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/scopes',
    title: 'an approval with several scopes (sorted, joined with a comma) completes the login',
    rules: ['ns.canonical.scopes-joined', 'ns.request.scope-vocabulary'],
    context: ['ns.request.scopes'],
    start: { scopes: [...vocabulary.scopes.values].reverse() },
    accept: true,
    build: (m) => m.genuine,
  };
}

function acceptSignatureStandardBase64Scenario(_profile: Profile): Scenario {
  return {
    name: 'accept/signature-standard-base64',
    title: 'a signature in padded standard base64 is accepted (any base64 variant)',
    rules: ['ns.response.signature'],
    accept: true,
    build: (m) => ({ ...m.genuine, signature: Buffer.from(decodeBase64Any(m.genuine.signature as string)!).toString('base64') }),
  };
}

function acceptIdentityCaseScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/identity-case',
    title: 'an identity sent in upper case with spaces is lowercased and trimmed (signed lowercased)',
    rules: ['ns.response.identity'],
    context: ['ns.canonical.lines'],
    accept: true,
    cells: [
      { rule: 'ns.response.identity', facet: 'normalization', value: 'upper-case' },
      { rule: 'ns.response.identity', facet: 'normalization', value: 'surrounding-spaces' },
    ],
    build: (m) => ({ ...m.genuine, identity: `  ${m.who.identity.toUpperCase()} ` }),
  };
}

function acceptRotatedInsideGraceScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/rotated-inside-grace',
    title: 'after a key rotation, an approval by the previous key inside its grace window is accepted',
    rules: ['ns.verify.7'],
    context: ['ns.identity-document.previous-keys', 'ns.resolve.chain'],
    accept: true,
    cells: [{ rule: 'ns.verify.7', facet: 'rotation-grace', value: 'inside' }],
    build: async (m) => {
      const next = new Uint8Array(randomBytes(32));
      await m.s.target.authority.publish({
        identity: m.who.identity,
        seed: next,
        previousKeys: [{ publicKey: formatKey(publicKeyFromSeed(m.who.seed)), validUntil: formatRfc3339(now() + 600_000) }],
      });
      return m.genuine;
    },
  };
}

/** In the order the checks run. */
export function acceptScenarios(profile: Profile): Scenario[] {
  return [
    acceptIdentityKeyScenario(profile),
    acceptSessionKeyScenario(profile),
    acceptLoginOnlyScenario(profile),
    acceptScopesScenario(profile),
    acceptSignatureStandardBase64Scenario(profile),
    acceptIdentityCaseScenario(profile),
    acceptRotatedInsideGraceScenario(profile),
  ];
}
