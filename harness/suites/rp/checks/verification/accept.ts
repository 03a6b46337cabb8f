// Acceptance scenarios (ns.auth.2, the canonical string, encodings): approvals an RP must accept.
import { randomBytes } from 'node:crypto';
import type { Profile } from '../../../../../protocol/common/profile.ts';
import { publicKeyFromSeed } from '../../../../../protocol/common/ed25519.ts';
import { decodeBase64Any } from '../../../../../protocol/common/base64.ts';
import { formatKey } from '../../../../../protocol/common/keys.ts';
import { formatRfc3339, parseRfc3339 } from '../../../../../protocol/common/time.ts';
import { limits } from '../../../../../schemas/ts/limits.ts';
import { CheckFailure } from '../../driver.ts';
import { vocabulary } from '../../../../../schemas/ts/vocabulary.ts';
import { type Scenario, now, session, sessionApproval, win } from './scenario.ts';

function acceptIdentityKeyScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/identity-key',
    title: 'an approval signed by the identity key completes the login',
    rules: ['ns.auth.2', 'ns.verify.2', 'ns.verify.6', 'ns.verify.7', 'ns.canonical.format', 'ns.canonical.lines', 'ns.response.fields', 'ns.response.key-id'],
    context: ['ns.resolve.chain', 'ns.identity-document.format'],
    accept: true,
    cells: [
      { rule: 'ns.auth.2', facet: 'who', value: 'identity-key' },
      // Its audience is the request's, the RP's own origin as the RP normalized it.
      { rule: 'ns.verify.2', facet: 'normalization', value: 'own-origin' },
    ],
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
    cells: [
      { rule: 'ns.auth.2', facet: 'who', value: 'session-key' },
      { rule: 'ns.session-proof.signature', facet: 'who', value: 'identity-key' },
    ],
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

function acceptWindowAsIssuedScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/window-as-issued',
    title: `the RP's own window, at most ${win} s (the reference's spans exactly that), copied verbatim, completes the login`,
    rules: ['ns.verify.4', 'ns.limits.window'],
    context: ['ns.response.window-copied', 'ns.request.window'],
    accept: true,
    cells: [
      { rule: 'ns.verify.4', facet: 'span', value: 'inside' },
      { rule: 'ns.limits.window', facet: 'window', value: 'inside' },
    ],
    build: (m) => {
      const span = (parseRfc3339(m.request.expires_at)! - parseRfc3339(m.request.issued_at)!) / 1000;
      if (!(span > 0 && span <= win)) throw new CheckFailure(`the RP's request spans ${span} s, not within (0, ${win}] (ns.request.window)`);
      m.s.note(`the request spans ${span} s${span === win ? ', exactly the limit' : ''}`);
      return m.genuine;
    },
  };
}

function acceptStatementAtCapScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/statement-at-cap',
    title: `a statement of exactly ${limits.statement_max_bytes} bytes (two-byte characters) completes the login`,
    rules: ['ns.limits.statement', 'ns.verify.3'],
    context: ['ns.request.statement'],
    start: { statement: 'é'.repeat(limits.statement_max_bytes / 2) },
    accept: true,
    cells: [{ rule: 'ns.limits.statement', facet: 'limit', value: 'at' }],
    build: (m) => m.genuine,
  };
}

function acceptSessionTtlAtCapScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/session-ttl-at-cap',
    title: `a session proof of exactly ${limits.session_ttl_max_seconds / 3600} hours completes the login`,
    rules: ['ns.session-proof.ttl', 'ns.limits.session-ttl'],
    context: ['ns.session-proof.validation', 'ns.auth.2'],
    accept: true,
    cells: [
      { rule: 'ns.session-proof.ttl', facet: 'window', value: 'inside' },
      { rule: 'ns.limits.session-ttl', facet: 'window', value: 'inside' },
    ],
    build: (m) => sessionApproval(m, session(m, { issuedAt: now() - 60_000, ttlSeconds: limits.session_ttl_max_seconds })),
  };
}

function acceptSessionProofExpiringScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/session-proof-expiring',
    title: 'a session proof that expires in 20 seconds completes the login',
    rules: ['ns.session-proof.validation'],
    context: ['ns.auth.2'],
    accept: true,
    cells: [{ rule: 'ns.session-proof.validation', facet: 'expiry', value: 'inside' }],
    build: (m) => sessionApproval(m, session(m, { issuedAt: now() - 3600_000 + 20_000, ttlSeconds: 3600 })),
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
    acceptWindowAsIssuedScenario(profile),
    acceptStatementAtCapScenario(profile),
    acceptSessionTtlAtCapScenario(profile),
    acceptSessionProofExpiringScenario(profile),
  ];
}
