// npm run vectors: Drive keys (document 3, Drive API; spec/drive.yaml): drive-seals.json,
// drive-names.json, drive-shares.json, groups.json, group-keys.json, pow.json, pow-clamp.json.
// Built with protocol/relay/drive and checked against harness/impl/noble-drive.ts.
import { driveContext } from '../../protocol/relay/drive/context.ts';
import { sealDomain } from '../../protocol/relay/drive/seal.ts';
import { normalizeName, nameHash } from '../../protocol/relay/drive/names.ts';
import { driveString } from '../../protocol/relay/drive/framing.ts';
import { signDrive, driveHash } from '../../protocol/relay/drive/sign.ts';
import { shareProblems } from '../../protocol/relay/drive/share.ts';
import { deriveLink, verifierHash } from '../../protocol/relay/drive/link.ts';
import { guestAuthor } from '../../protocol/relay/drive/guest.ts';
import { openKeyring, groupContext } from '../../protocol/relay/drive/groups.ts';
import { checkPow, solvePow, clampPowBits } from '../../protocol/relay/drive/pow.ts';
import * as nd from '../../harness/impl/noble-drive.ts';
import { check, same, b64u, utf8 } from './check.ts';
import { profile, ALICE, BOB, aliceKey, edKey, xKey, bytesOf, recipient, ephemeral, at, fail } from './fixtures.ts';
import { emit } from './emit.ts';
import { NODE, folderKey, nodeKey, fixedSeal, idHex } from './drive-content.ts';

type Obj = Record<string, unknown>;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
const eph = { ephemeral_private_key: b64u(ephemeral.priv) };

// Seals: every drive domain with a context, the message domain without.
const secret = utf8('svc drive secret');
const seals = (['key', 'name', 'record', 'group', 'message'] as const).map((kind) => {
  const ctx = kind === 'message' ? new Uint8Array() : driveContext(ALICE, NODE, kind, 1);
  return { name: kind, domain: sealDomain(profile, kind), private_key: b64u(nodeKey.priv), public_key: b64u(nodeKey.pub), context: b64u(ctx), plaintext: b64u(secret), payload: fixedSeal(kind, nodeKey, secret, ctx, `drive seal ${kind}`), ...eph };
});
emit('drive-seals', 'drive-seals', 'Seals (rule ra.drive.seal): x25519-chacha20-poly1305 as messages (ra.seal.message) under each drive domain with the context appended to the AAD, and the message domain with none; the ephemeral key and nonce are fixed for reproducibility.', { vectors: seals }, seals.length);

// Names: NFC and NFD forms, case, other scripts, a dot name; then names no folder may hold.
const names = ['caf\u00e9', 'cafe\u0301', 'Caf\u00e9', '\u4e16\u754c \ud83d\udd12', `.${profile.name}`, '.', '..', 'a/b', 'x'.repeat(256)].map((name) => {
  const normalized = normalizeName(name);
  same(`drive name ${name}: noble`, nd.validName(name), normalized);
  const hash = nameHash(profile, folderKey.priv, name);
  same(`drive name ${name}: hash (noble)`, nd.nameHash(profile, folderKey.priv, name), hash);
  return normalized === undefined ? { name, private_key: b64u(folderKey.priv), valid: false } : { name, normalized, private_key: b64u(folderKey.priv), hash };
});
emit('drive-names', 'drive-names', `Node names (rule ra.drive.name-hash): the NFC form and the hex HMAC-SHA256 lookup token under HKDF-SHA256(folder private key, salt its public key, info \`${profile.name}/drive/name-index/v1\`). \`valid\` false: not a node name (reserved, a slash, over 255 bytes), no normalized form and no token.`, { vectors: names }, names.length);

// Shares, signed by alice: a member share carrying the node key, a password link with proof of work.
const PASSWORD = 'correct horse battery staple';
const salt = bytesOf('drive-link-salt');
const link = await deriveLink(PASSWORD, salt);
const other = await nd.linkSecrets(PASSWORD, salt);
same('drive link: noble derives the same key and verifier', [b64u(other.key), b64u(other.verifier)], [b64u(link.key), b64u(link.verifier)]);
const shareBase = { format: 1, drive: ALICE, id: idHex('drive-share'), node: NODE, generation: 1, node_public: b64u(nodeKey.pub), issuer: ALICE, issued: at(0) };
const shareCases: [string, Obj, Obj][] = [
  ['member-read', { ...shareBase, member: BOB, role: 'read', node_key: fixedSeal('key', recipient, nodeKey.priv, driveContext(ALICE, NODE, 'node-key', 1), 'drive share'), expires: at(86400), caps: {} }, {}],
  [
    'link-create-password',
    { ...shareBase, link: idHex('drive-link'), role: 'create', caps: { files: 1, per_hour: 10 }, kdf: 'argon2id-m65536-t3-p1', salt: b64u(salt), verifier_hash: verifierHash(link.verifier), pow: 12 },
    { password: PASSWORD, link_key: b64u(link.key), verifier: b64u(link.verifier) },
  ],
];
const shares = shareCases.map(([name, fields, extra]) => {
  const share: Obj = { ...fields, signature: signDrive(profile, 'share', fields, aliceKey.seed) };
  same(`drive share ${name}: problems`, shareProblems(share), []);
  same(`drive share ${name}: hash (noble)`, nd.hashOf(profile, 'share', share), driveHash(profile, 'share', share));
  check(nd.verifySigned(profile, 'share', share, aliceKey.pub), `drive share ${name}: signature (noble)`);
  return { name, share, seed: b64u(aliceKey.seed), public_key: b64u(aliceKey.pub), canonical: hex(driveString(profile, 'share', share)), hash: driveHash(profile, 'share', share), ...extra };
});
const guest = edKey('drive-guest');
same('drive guest author (noble)', nd.guestAuthor(guest.pub), guestAuthor(guest.pub));
emit(
  'drive-shares',
  'drive-shares',
  'Signed shares (rules ra.drive.share, ra.drive.link-kdf): `canonical` is the framed signed string in hex and `hash` its share hash; the password link gives its `password`, the argon2id `link_key` (bytes 0..31) and `verifier` (bytes 32..63, whose SHA-256 the share carries). `guests` (rule ra.drive.guest): a guest key and its author name.',
  { shares, guests: [{ seed: b64u(guest.seed), public_key: b64u(guest.pub), author: guestAuthor(guest.pub) }] },
  shares.length + 1,
);

// Group rosters and keyrings, signed by the group identity's key.
const groupKey = edKey('drive-group-identity');
const GROUP = 'team.example.com';
const rosters: [string, Obj][] = [
  ['owner-roster', { group: 'Friends', owner: ' Alice.Example.com ', members: ['Bob.example.org', ' carol.example.net ', 'zoe.example.org'], updated_at: at(0) }],
  ['group-identity', { group: GROUP, owner: GROUP, members: [ALICE, BOB], admins: [ALICE], epoch: 2, updated_at: at(0) }],
];
const groups = rosters.map(([name, fields]) => {
  const group: Obj = { ...fields, signature: signDrive(profile, 'group-roster', fields, groupKey.seed) };
  const canonical = text(driveString(profile, 'group-roster', group));
  same(`group ${name}: lines (noble)`, text(nd.driveString(profile, 'group-roster', group)), canonical);
  return { name, group, canonical, public_key: b64u(groupKey.pub) };
});
emit('groups', 'groups', `Group rosters (rule ra.drive.group-roster): the signed lines \`${profile.name}-share-group\`, group, owner, sorted members, updated_at, and for a group identity \`${profile.name}-group-identity\`, admins and epoch; \`public_key\` is the signer's.`, { vectors: groups }, groups.length);

const [epoch1, epoch2] = [xKey('drive-group-epoch-1'), xKey('drive-group-epoch-2')];
const members: [string, { priv: Uint8Array; pub: Uint8Array }][] = [
  [ALICE, recipient],
  [BOB, folderKey],
];
const sealFor = (to: { priv: Uint8Array; pub: Uint8Array }, key: Uint8Array, ctx: Uint8Array) => fixedSeal('group', to, key, ctx, 'group keyring');
const ringFields: Obj = {
  version: 1,
  group: GROUP,
  epoch: 2,
  public: b64u(epoch2.pub),
  sealed: Object.fromEntries(members.map(([id, to]) => [id, sealFor(to, epoch2.priv, groupContext('member', { group: GROUP, epoch: 2, recipient: id }))])),
  previous: [{ epoch: 1, public: b64u(epoch1.pub), sealed: sealFor(epoch2, epoch1.priv, groupContext('previous', { group: GROUP, epoch: 1, current: 2 })) }],
  updated_at: at(0),
};
const keyring = { ...ringFields, signature: signDrive(profile, 'group-keys', ringFields, groupKey.seed) };
const publicFields = { version: 1, group: GROUP, epoch: 2, public: b64u(epoch2.pub), updated_at: at(0) };
const publicDoc = { ...publicFields, signature: signDrive(profile, 'group-key', publicFields, groupKey.seed) };
const opened = openKeyring(profile, keyring, BOB, folderKey.priv);
if (!opened.ok) fail(`group keyring: ${opened.reason}`);
const shown = opened.keys.map((k) => ({ epoch: k.epoch, private: b64u(k.private) }));
same('group keyring: noble opens the same keys', nd.keyringKeys(profile, keyring, BOB, folderKey.priv)?.map((k) => ({ epoch: k.epoch, private: b64u(k.private) })), shown);
const groupKeys = [
  {
    name: 'two-epochs',
    keyring,
    canonical: text(driveString(profile, 'group-keys', keyring)),
    public: publicDoc,
    public_canonical: text(driveString(profile, 'group-key', publicDoc)),
    member: BOB,
    member_private: b64u(folderKey.priv),
    opened: shown,
    public_key: b64u(groupKey.pub),
  },
];
emit('group-keys', 'group-keys', `Group keyrings (rules ra.drive.group-keys, ra.drive.seal): each epoch key sealed under \`${profile.name}/group/key/v1\` to every member (context \`member\` LF group LF epoch LF recipient) and earlier keys to the current one (\`previous\` LF group LF epoch LF current); \`opened\` lists the member's keys, newest first.`, { vectors: groupKeys }, groupKeys.length);

// Proof of work: the first counter solution for each difficulty, and one that does not solve.
const pow = [8, 12, 4].map((bits, i) => {
  const token = `${profile.name}-vector-token-${i + 1}`;
  const solution = solvePow(token, bits);
  check(nd.powValid(token, solution, bits), `pow ${token}: noble refuses the solution`);
  return { token, bits, solution, valid: true };
});
check(!checkPow(pow[0]!.token, 'not-a-solution', 24) && !nd.powValid(pow[0]!.token, 'not-a-solution', 24), 'pow: a non-solution solves');
pow.push({ token: pow[0]!.token, bits: 24, solution: 'not-a-solution', valid: false });
emit('pow', 'pow', 'Proof of work (rule ra.drive.pow): SHA-256 of token `.` solution has at least `bits` leading zero bits; solutions are the first 8-byte big-endian counter, base64url, that solves.', { vectors: pow }, pow.length);
const clamp = [0, -5, 1, 8, 16, 30, 31, 100].map((input) => {
  same(`pow clamp ${input} (noble)`, nd.powClamp(input), clampPowBits(input));
  return { input, output: clampPowBits(input) };
});
emit('pow-clamp', 'pow-clamp', 'Requested proof-of-work difficulty and the clamped one (rule ra.drive.pow): 0 or less means the default, others are clamped into the limits.', { vectors: clamp }, clamp.length);
