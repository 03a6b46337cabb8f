// npm run vectors: Signed strings (spec/signing.yaml): canonical.json.

import * as ed from '@noble/ed25519';
import { signingSpec, type SignedStringName } from '../../schemas/ts/signing.ts';
import { canonicalString } from '../../protocol/common/canonical.ts';
import { signEd25519, verifyEd25519 } from '../../protocol/common/ed25519.ts';
import { check, same, type Json, ruleIds, b64u, digest, utf8, lines } from './check.ts';
import { profile, NAME, edKey, bytesOf, NOW_TEXT, NOW, ORIGIN, at, ALICE, BOB, aliceKey, SESSION_ID, session, sessionKey, recipient, ephemeral } from './fixtures.ts';
import { emit } from './emit.ts';
import { STATEMENT, signin } from './signin.ts';


export interface CanonicalCase {
  name: string;
  string: SignedStringName;
  inputs: Json;
  lines: string[];
  extra?: Json;
}
export const ISSUED = NOW_TEXT;
export const NONCE = b64u(utf8('vector-nonce-001'));
export const MSG_ID = `msg_${NOW}_abcdefghi`;
export const ENC = { alg: 'x25519-chacha20-poly1305', ephemeral_public_key: b64u(ephemeral.pub), nonce: b64u(bytesOf('seal-nonce')) };
export const PAYLOAD = b64u(utf8('ciphertext'));
export const WRAPPED = '{"alg":"A256GCM","iv":"AAECAwQFBgcICQoL","ct":"c2VhbGVkLWtleQ"}';
export const REQUEST_BODY = '{"recipient":"bob.example.org"}';
export const hex = (data: string) => digest(data).toString('hex');
export const enrollment = { identity: ALICE, issued_at: ISSUED, nonce: NONCE };
export const aliceNext = edKey('alice-next');
export const signinInputs = (() => {
  const { signature: _signature, ...rest } = signin[0]!.response;
  return rest;
})();
export const canonicalCases: CanonicalCase[] = [
  {
    name: 'signin',
    string: 'signin',
    inputs: signinInputs,
    lines: [`${NAME}-signin`, '1', 'req-valid-identity', ALICE, ORIGIN, String(signinInputs.nonce), at(-60), at(60), 'signin', STATEMENT, 'messages:send', 'identity'],
  },
  {
    name: 'session-registration',
    string: 'session-registration',
    inputs: { identity: ALICE, session_public_key: b64u(sessionKey.pub), issued_at: session.issued_at, expires_at: session.expires_at, nonce: session.nonce },
    lines: ['session-registration', ALICE, b64u(sessionKey.pub), session.issued_at, session.expires_at, session.nonce],
  },
  {
    name: 'session-revocation',
    string: 'session-revocation',
    inputs: { identity: ALICE, session_id: SESSION_ID, issued_at: ISSUED, nonce: NONCE },
    lines: ['session-revocation', ALICE, SESSION_ID, ISSUED, NONCE],
  },
  {
    name: 'identity-registration',
    string: 'identity-registration',
    inputs: { identity: ALICE, public_key: b64u(aliceKey.pub), encryption_public_key: b64u(recipient.pub), relay_address: 'relay.example.com', issued_at: ISSUED, nonce: NONCE },
    lines: ['identity-registration', ALICE, b64u(aliceKey.pub), b64u(recipient.pub), 'relay.example.com', ISSUED, NONCE],
  },
  {
    name: 'identity-registration-no-encryption-key',
    string: 'identity-registration',
    inputs: { identity: ALICE, public_key: b64u(aliceKey.pub), relay_address: 'relay.example.com:8443', issued_at: ISSUED, nonce: NONCE },
    lines: ['identity-registration', ALICE, b64u(aliceKey.pub), '', 'relay.example.com:8443', ISSUED, NONCE],
  },
  { name: 'identity-export', string: 'identity-export', inputs: { ...enrollment }, lines: ['identity-export', ALICE, ISSUED, NONCE] },
  {
    name: 'identity-rotation',
    string: 'identity-rotation',
    inputs: { identity: ALICE, old_public_key: b64u(aliceKey.pub), new_public_key: b64u(aliceNext.pub), issued_at: ISSUED, nonce: NONCE },
    lines: ['identity-rotation', ALICE, b64u(aliceKey.pub), b64u(aliceNext.pub), ISSUED, NONCE],
  },
  {
    name: 'identity-encryption-key',
    string: 'identity-encryption-key',
    inputs: { identity: ALICE, encryption_public_key: b64u(recipient.pub), issued_at: ISSUED, nonce: NONCE },
    lines: ['identity-encryption-key', ALICE, b64u(recipient.pub), ISSUED, NONCE],
  },
  {
    name: 'keystore-enroll',
    string: 'keystore-enroll',
    inputs: { identity: ALICE, enrollment_id: 'enr-001', kind: 'passkey', credential_id: b64u(utf8('cred-001')), wrapped_digest: b64u(digest(WRAPPED)), issued_at: ISSUED, nonce: NONCE },
    lines: ['keystore-enroll', ALICE, 'enr-001', 'passkey', b64u(utf8('cred-001')), b64u(digest(WRAPPED)), ISSUED, NONCE],
    extra: { wrapped: WRAPPED },
  },
  {
    name: 'keystore-enroll-no-credential',
    string: 'keystore-enroll',
    inputs: { identity: ALICE, enrollment_id: 'enr-002', kind: 'recovery-kit', credential_id: '', wrapped_digest: b64u(digest(WRAPPED)), issued_at: ISSUED, nonce: NONCE },
    lines: ['keystore-enroll', ALICE, 'enr-002', 'recovery-kit', '', b64u(digest(WRAPPED)), ISSUED, NONCE],
    extra: { wrapped: WRAPPED },
  },
  { name: 'keystore-list', string: 'keystore-list', inputs: { ...enrollment }, lines: ['keystore-list', ALICE, ISSUED, NONCE] },
  {
    name: 'keystore-remove',
    string: 'keystore-remove',
    inputs: { identity: ALICE, enrollment_id: 'enr-001', issued_at: ISSUED, nonce: NONCE },
    lines: ['keystore-remove', ALICE, 'enr-001', ISSUED, NONCE],
  },
  { name: 'enroll-fetch', string: 'enroll-fetch', inputs: { identity: ALICE, rendezvous_id: 'K7QM4XP2', issued_at: ISSUED, nonce: NONCE }, lines: ['enroll-fetch', ALICE, 'K7QM4XP2', ISSUED, NONCE] },
  {
    name: 'enroll-deliver',
    string: 'enroll-deliver',
    inputs: { identity: ALICE, rendezvous_id: 'K7QM4XP2', issued_at: ISSUED, nonce: NONCE },
    lines: ['enroll-deliver', ALICE, 'K7QM4XP2', ISSUED, NONCE],
  },
  {
    name: 'signed-request',
    string: 'signed-request',
    inputs: { identity: ALICE, method: 'POST', path: '/messages', timestamp: String(NOW / 1000), nonce: 'c2lnbmVkLXJlcXVlc3Qtbm9uY2U', body_sha256: hex(REQUEST_BODY) },
    lines: [`${NAME}-request/v1`, ALICE, 'POST', '/messages', String(NOW / 1000), 'c2lnbmVkLXJlcXVlc3Qtbm9uY2U', hex(REQUEST_BODY)],
    extra: { body: REQUEST_BODY },
  },
  {
    name: 'signed-request-no-body',
    string: 'signed-request',
    inputs: { identity: ALICE, method: 'GET', path: `/messages?since=${NOW / 1000 - 3600}`, timestamp: String(NOW / 1000), nonce: 'c2lnbmVkLXJlcXVlc3Qtbm9uY2UtZ2V0', body_sha256: hex('') },
    lines: [`${NAME}-request/v1`, ALICE, 'GET', `/messages?since=${NOW / 1000 - 3600}`, String(NOW / 1000), 'c2lnbmVkLXJlcXVlc3Qtbm9uY2UtZ2V0', hex('')],
    extra: { body: '' },
  },
  { name: 'challenge', string: 'challenge', inputs: { challenge: 'Y2hhbGxlbmdlLWZvci1hbGljZS0wMDE' }, lines: ['Y2hhbGxlbmdlLWZvci1hbGljZS0wMDE'] },
  { name: 'message-minimal', string: 'message', inputs: { sender: ALICE, recipient: BOB, timestamp: ISSUED, payload: PAYLOAD }, lines: [ALICE, BOB, ISSUED, PAYLOAD] },
  {
    name: 'message-session-encrypted',
    string: 'message',
    inputs: { sender: ALICE, recipient: BOB, timestamp: ISSUED, payload: PAYLOAD, id: MSG_ID, session_id: SESSION_ID, encryption: ENC },
    lines: [ALICE, BOB, ISSUED, PAYLOAD, `id:${MSG_ID}`, `session:${SESSION_ID}`, `enc:${ENC.alg}:${ENC.ephemeral_public_key}:${ENC.nonce}`],
  },
  {
    name: 'message-typed',
    string: 'message',
    inputs: { sender: ALICE, recipient: BOB, timestamp: ISSUED, payload: PAYLOAD, id: MSG_ID, session_id: '', encryption: ENC, type: 'sys.contact.request' },
    lines: [ALICE, BOB, ISSUED, PAYLOAD, `id:${MSG_ID}`, `enc:${ENC.alg}:${ENC.ephemeral_public_key}:${ENC.nonce}`, 'type:sys.contact.request'],
  },
  {
    name: 'message-threaded',
    string: 'message',
    inputs: { sender: ALICE, recipient: BOB, timestamp: ISSUED, payload: PAYLOAD, id: MSG_ID, session_id: SESSION_ID, encryption: ENC, thread_id: `thr_${NOW}_project` },
    lines: [ALICE, BOB, ISSUED, PAYLOAD, `id:${MSG_ID}`, `session:${SESSION_ID}`, `enc:${ENC.alg}:${ENC.ephemeral_public_key}:${ENC.nonce}`, `thread:thr_${NOW}_project`],
  },
  {
    name: 'message-full-envelope',
    string: 'message',
    // Metadata deliberately out of key order: the string sorts it.
    inputs: {
      sender: ALICE,
      recipient: BOB,
      timestamp: ISSUED,
      payload: PAYLOAD,
      id: MSG_ID,
      session_id: SESSION_ID,
      encryption: ENC,
      type: 'chat.attachment',
      thread_id: `thr_${NOW}_project`,
      expires_at: at(86400),
      metadata: { mime: 'image/png', 'share.path': 'shared/.attachments/a1', bytes: '20480' },
    },
    lines: [
      ALICE,
      BOB,
      ISSUED,
      PAYLOAD,
      `id:${MSG_ID}`,
      `session:${SESSION_ID}`,
      `enc:${ENC.alg}:${ENC.ephemeral_public_key}:${ENC.nonce}`,
      'type:chat.attachment',
      `thread:thr_${NOW}_project`,
      `expires:${at(86400)}`,
      'meta:bytes:20480',
      'meta:mime:image/png',
      'meta:share.path:shared/.attachments/a1',
    ],
  },
  {
    name: 'message-metadata-outside-bmp',
    string: 'message',
    // Keys outside the BMP sort after U+E000..U+FFFF in code-point (UTF-8 byte) order; UTF-16
    // code-unit order would put the surrogate pair of U+1F600 first.
    inputs: {
      sender: ALICE,
      recipient: BOB,
      timestamp: ISSUED,
      payload: PAYLOAD,
      id: MSG_ID,
      metadata: { '\u{1F600}': 'emoji', '\uFFFD': 'replacement', '\uE000': 'private-use', z: 'ascii', '\u{10000}': 'linear-b' },
    },
    lines: [ALICE, BOB, ISSUED, PAYLOAD, `id:${MSG_ID}`, 'meta:z:ascii', 'meta:\uE000:private-use', 'meta:\uFFFD:replacement', 'meta:\u{10000}:linear-b', 'meta:\u{1F600}:emoji'],
  },
  {
    name: 'ack',
    string: 'ack',
    inputs: { id: `ack_${NOW}_jklmnopqr`, message_id: MSG_ID, state: 'delivered_client', sender: BOB, recipient: ALICE, timestamp: ISSUED, session_id: '' },
    lines: ['ack', `ack_${NOW}_jklmnopqr`, MSG_ID, 'delivered_client', BOB, ALICE, ISSUED],
  },
  {
    name: 'ack-session',
    string: 'ack',
    inputs: { id: `ack_${NOW}_jklmnopqr`, message_id: MSG_ID, state: 'delivered_client', sender: BOB, recipient: ALICE, timestamp: ISSUED, session_id: 'sess_bob_1' },
    lines: ['ack', `ack_${NOW}_jklmnopqr`, MSG_ID, 'delivered_client', BOB, ALICE, ISSUED, 'session:sess_bob_1'],
  },
];
export const canonicalVectors = canonicalCases.map((c) => {
  const expected = lines(...c.lines);
  same(`canonical ${c.name} (core)`, canonicalString(profile, c.string, c.inputs), expected);
  const signature = signEd25519(aliceKey.seed, expected);
  same(`canonical ${c.name} signature (noble)`, b64u(ed.sign(utf8(expected), aliceKey.seed)), b64u(signature));
  check(verifyEd25519(aliceKey.pub, expected, signature), `canonical ${c.name}: signature does not verify`);
  const entry = signingSpec.strings[c.string];
  return { name: c.name, string: c.string, inputs: c.inputs, ...(c.extra ?? {}), canonical: expected, signature: b64u(signature), rules: ruleIds(entry.rule, 'ra.signing.format') };
});
for (const [name, entry] of Object.entries(signingSpec.strings) as Array<[SignedStringName, { output: string; lines?: unknown }]>) {
  if (entry.output !== 'ed25519' || !entry.lines) continue;
  check(
    canonicalCases.some((c) => c.string === name),
    `canonical.json has no vector for the ed25519 string ${name} of spec/signing.yaml`,
  );
}
emit(
  'canonical',
  'canonical',
  'Every line-based Ed25519 string of spec/signing.yaml: `string` names the entry, `inputs` are the fields it is built from (an extra field such as `wrapped` or `body` shows what a digest input was computed from), `canonical` is the exact string (lines joined with a line feed, no trailing line feed, UTF-8) and `signature` is the Ed25519 signature (base64url, no padding) by the key of `seed_base64url`, whatever key the protocol would sign that string with.',
  { public_key_base64url: b64u(aliceKey.pub), seed_base64url: b64u(aliceKey.seed), vectors: canonicalVectors },
  canonicalVectors.length,
);
