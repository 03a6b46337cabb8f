// Verification rule 7: the signature, the canonical string, key rotation and session keys.
import { randomBytes } from 'node:crypto';
import type { Profile } from '../../../../../protocol/common/profile.ts';
import { canonicalString } from '../../../../../protocol/common/canonical.ts';
import { signEd25519, publicKeyFromSeed } from '../../../../../protocol/common/ed25519.ts';
import { encodeBase64url } from '../../../../../protocol/common/base64.ts';
import { formatKey } from '../../../../../protocol/common/keys.ts';
import { limits } from '../../../../../schemas/ts/limits.ts';
import { vocabulary } from '../../../../../schemas/ts/vocabulary.ts';
import { isoShift, sign } from '../../driver.ts';
import { type Scenario, resign, signLines, nonCanonicalS, flipBit, now, session, sessionApproval, reproof, R } from './scenario.ts';

function rule7WrongKeyScenario(profile: Profile): Scenario {
  return {
    name: '7/wrong-key',
    title: "an approval signed by another key than the identity's is refused",
    rules: ['ns.verify.7', 'ns.auth.2'],
    expect: R(401, 'signature_invalid'),
    cells: [{ rule: 'ns.auth.2', facet: 'who', value: 'other-key' }],
    build: (m) => resign(profile, m.genuine, new Uint8Array(randomBytes(32))),
  };
}

function rule7BitFlipScenario(_profile: Profile): Scenario {
  return {
    name: '7/bit-flip',
    title: 'an approval with one signature bit changed is refused',
    rules: ['ns.verify.7'],
    context: ['ns.response.signature'],
    expect: R(401, 'signature_invalid'),
    build: (m) => ({ ...m.genuine, signature: flipBit(m.genuine.signature as string, 77) }),
  };
}

function strictNonCanonicalSScenario(_profile: Profile): Scenario {
  return {
    name: 'strict/non-canonical-s',
    title: 'a signature with S + L (non-canonical S) is refused (strict Ed25519)',
    rules: ['ns.ed25519.strict'],
    context: ['ns.verify.7'],
    expect: R(401, 'signature_invalid'),
    build: (m) => ({ ...m.genuine, signature: nonCanonicalS(m.genuine.signature as string) }),
  };
}

function rule7CanonicalTrailingLfScenario(profile: Profile): Scenario {
  return {
    name: '7/canonical-trailing-lf',
    title: 'a signature over the canonical string plus a trailing line feed is refused',
    rules: ['ns.verify.7', 'ns.canonical.format'],
    expect: R(401, 'signature_invalid'),
    build: (m) => signLines(profile, m.genuine, m.who.seed, (l) => `${l.join('\n')}\n`),
  };
}

function rule7CanonicalCrlfScenario(profile: Profile): Scenario {
  return {
    name: '7/canonical-crlf',
    title: 'a signature over the lines joined with CR LF is refused',
    rules: ['ns.verify.7', 'ns.canonical.format'],
    expect: R(401, 'signature_invalid'),
    build: (m) => signLines(profile, m.genuine, m.who.seed, (l) => l.join('\r\n')),
  };
}

function rule7CanonicalLinesSwappedScenario(profile: Profile): Scenario {
  return {
    name: '7/canonical-lines-swapped',
    title: 'a signature over the lines with audience and nonce swapped is refused',
    rules: ['ns.verify.7', 'ns.canonical.lines'],
    expect: R(401, 'signature_invalid'),
    build: (m) => signLines(profile, m.genuine, m.who.seed, (l) => [...l.slice(0, 4), l[5]!, l[4]!, ...l.slice(6)].join('\n')),
  };
}

function rule7CanonicalStatementOmittedScenario(profile: Profile): Scenario {
  return {
    name: '7/canonical-statement-omitted',
    title: 'a signature that drops the empty statement line is refused',
    rules: ['ns.verify.7', 'ns.canonical.statement-empty'],
    start: { statement: '' },
    expect: R(401, 'signature_invalid'),
    build: (m) => signLines(profile, m.genuine, m.who.seed, (l) => [...l.slice(0, 9), ...l.slice(10)].join('\n')),
  };
}

function rule7CanonicalScopesUnsortedScenario(profile: Profile): Scenario {
  return {
    name: '7/canonical-scopes-unsorted',
    title: 'a signature over the scopes line in another order is refused',
    rules: ['ns.verify.7', 'ns.canonical.scopes-joined'],
    start: { scopes: [...vocabulary.scopes.values] },
    expect: R(401, 'signature_invalid'),
    build: (m) => signLines(profile, m.genuine, m.who.seed, (l) => [...l.slice(0, 10), l[10]!.split(',').reverse().join(', '), ...l.slice(11)].join('\n')),
  };
}

function rule7RotatedOutsideGraceScenario(profile: Profile): Scenario {
  return {
    name: '7/rotated-outside-grace',
    title: 'after a key rotation, an approval by the previous key past its grace window is refused',
    rules: ['ns.verify.7'],
    context: ['ns.identity-document.previous-keys'],
    expect: R(401, 'signature_invalid'),
    cells: [{ rule: 'ns.verify.7', facet: 'rotation-grace', value: 'outside' }],
    build: async (m) => {
      const other = await m.s.identity();
      await m.s.target.authority.publish({
        identity: other.identity,
        seed: new Uint8Array(randomBytes(32)),
        previousKeys: [{ publicKey: formatKey(publicKeyFromSeed(other.seed)), validUntil: isoShift(m.request.issued_at, -60) }],
      });
      return sign(profile, m.request, other);
    },
  };
}

function rule7SessionWithoutProofScenario(_profile: Profile): Scenario {
  return {
    name: '7/session-without-proof',
    title: 'key_id naming a session without session_proof is refused',
    rules: ['ns.verify.7', 'ns.auth.2.session-proof', 'ns.response.session-proof-presence'],
    expect: R(401, 'session_proof_mismatch'),
    build: (m) => {
      const a = sessionApproval(m, session(m));
      delete a.session_proof;
      return a;
    },
  };
}

function rule7ProofWithIdentityKeyScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-with-identity-key',
    title: 'a session_proof with key_id identity is refused',
    rules: ['ns.verify.7', 'ns.auth.2.session-proof', 'ns.response.session-proof-presence'],
    expect: R(401, 'session_proof_mismatch'),
    build: (m) => ({ ...m.genuine, session_proof: session(m).proof }),
  };
}

function rule7KeyIdInvalidScenario(profile: Profile): Scenario {
  return {
    name: '7/key-id-invalid',
    title: 'a key_id that is neither identity nor a session (re-signed) is refused',
    rules: ['ns.verify.7', 'ns.response.key-id'],
    expect: R(401, 'invalid_key_id'),
    build: (m) => resign(profile, { ...m.genuine, key_id: 'device' }, m.who.seed),
  };
}

function rule7ProofMissingFieldScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-missing-field',
    title: 'a session proof without its nonce is refused',
    rules: ['ns.verify.7', 'ns.session-proof.fields'],
    context: ['ns.session-proof.validation'],
    expect: R(401, 'session_proof_invalid'),
    build: (m) =>
      sessionApproval(m, session(m), (p) => {
        delete p.nonce;
        return p;
      }),
  };
}

function rule7ProofExpiredScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-expired',
    title: 'an expired session proof is refused',
    rules: ['ns.verify.7', 'ns.session-proof.validation'],
    expect: R(401, 'session_proof_invalid'),
    build: (m) => sessionApproval(m, session(m, { issuedAt: now() - 7200_000, ttlSeconds: 3600 })),
  };
}

function rule7ProofJustExpiredScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-just-expired',
    title: 'a session proof that expired 2 seconds ago is refused',
    rules: ['ns.verify.7', 'ns.session-proof.validation'],
    expect: R(401, 'session_proof_invalid'),
    cells: [{ rule: 'ns.session-proof.validation', facet: 'expiry', value: 'outside' }],
    build: (m) => sessionApproval(m, session(m, { issuedAt: now() - 3600_000 - 2000, ttlSeconds: 3600 })),
  };
}

function rule7ProofTtlJustOverScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-ttl-just-over',
    title: `a session proof of ${limits.session_ttl_max_seconds} s plus one second is refused`,
    rules: ['ns.verify.7', 'ns.session-proof.ttl', 'ns.limits.session-ttl'],
    expect: R(401, 'session_proof_invalid'),
    cells: [
      { rule: 'ns.session-proof.ttl', facet: 'window', value: 'outside' },
      { rule: 'ns.limits.session-ttl', facet: 'window', value: 'outside' },
    ],
    build: (m) => sessionApproval(m, session(m, { issuedAt: now() - 60_000, ttlSeconds: limits.session_ttl_max_seconds + 1 })),
  };
}

function rule7ProofTtlOverCapScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-ttl-over-cap',
    title: `a session proof whose TTL exceeds ${limits.session_ttl_max_seconds} s is refused`,
    rules: ['ns.verify.7', 'ns.session-proof.ttl', 'ns.limits.session-ttl'],
    expect: R(401, 'session_proof_invalid'),
    build: (m) => sessionApproval(m, session(m, { ttlSeconds: limits.session_ttl_max_seconds + 3600 })),
  };
}

function rule7ProofBadKeyEncodingScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-bad-key-encoding',
    title: 'a session proof whose session_public_key is not 32 bytes is refused',
    rules: ['ns.verify.7', 'ns.session-proof.key-encoding'],
    expect: R(401, 'session_proof_invalid'),
    build: (m) => sessionApproval(m, session(m), (p) => reproof(m, { ...p, session_public_key: encodeBase64url(randomBytes(31)) })),
  };
}

function rule7ProofWrongSignerScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-wrong-signer',
    title: 'a session proof signed by another key than the identity key is refused',
    rules: ['ns.verify.7', 'ns.session-proof.signature'],
    expect: R(401, 'session_proof_invalid'),
    cells: [{ rule: 'ns.session-proof.signature', facet: 'who', value: 'other-key' }],
    build: (m) => sessionApproval(m, session(m, { proofSeed: new Uint8Array(randomBytes(32)) })),
  };
}

function rule7ProofWrongLinesScenario(profile: Profile): Scenario {
  return {
    name: '7/proof-wrong-lines',
    title: 'a session proof whose signed lines name another identity is refused',
    rules: ['ns.verify.7', 'ns.session-proof.signed-lines'],
    expect: R(401, 'session_proof_invalid'),
    cells: [{ rule: 'ns.session-proof.signed-lines', facet: 'binding', value: 'identity' }],
    build: (m) =>
      sessionApproval(m, session(m), (p) => ({
        ...p,
        identity_signature: encodeBase64url(signEd25519(m.who.seed, canonicalString(profile, 'session-registration', { ...p, identity: `x${m.who.identity}` }))),
      })),
  };
}

function rule7SessionKeyNotProvenScenario(profile: Profile): Scenario {
  return {
    name: '7/session-key-not-proven',
    title: 'an approval signed by a key other than the proven session key is refused',
    rules: ['ns.verify.7', 'ns.auth.2'],
    expect: R(401, 'signature_invalid'),
    cells: [{ rule: 'ns.auth.2', facet: 'who', value: 'unproven-session-key' }],
    build: (m) => {
      const key = session(m);
      return resign(profile, sign(profile, m.request, m.who, key), new Uint8Array(randomBytes(32)));
    },
  };
}

/** In the order the checks run. */
export function rule7Scenarios(profile: Profile): Scenario[] {
  return [
    rule7WrongKeyScenario(profile),
    rule7BitFlipScenario(profile),
    strictNonCanonicalSScenario(profile),
    rule7CanonicalTrailingLfScenario(profile),
    rule7CanonicalCrlfScenario(profile),
    rule7CanonicalLinesSwappedScenario(profile),
    rule7CanonicalStatementOmittedScenario(profile),
    rule7CanonicalScopesUnsortedScenario(profile),
    rule7RotatedOutsideGraceScenario(profile),
    rule7SessionWithoutProofScenario(profile),
    rule7ProofWithIdentityKeyScenario(profile),
    rule7KeyIdInvalidScenario(profile),
    rule7ProofMissingFieldScenario(profile),
    rule7ProofExpiredScenario(profile),
    rule7ProofJustExpiredScenario(profile),
    rule7ProofTtlJustOverScenario(profile),
    rule7ProofTtlOverCapScenario(profile),
    rule7ProofBadKeyEncodingScenario(profile),
    rule7ProofWrongSignerScenario(profile),
    rule7ProofWrongLinesScenario(profile),
    rule7SessionKeyNotProvenScenario(profile),
  ];
}
