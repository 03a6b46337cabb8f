// npm run vectors: Drive content (document 3, Drive API; spec/drive.yaml): drive-chunks.json,
// drive-manifests.json, drive-records.json. Built with protocol/relay/drive and checked against
// the independent @noble implementation (harness/impl/noble-drive.ts) before anything is written.
import { driveContext } from '../../protocol/relay/drive/context.ts';
import { sealChunk, openChunk, chunkId } from '../../protocol/relay/drive/chunk.ts';
import { sealTo } from '../../protocol/relay/drive/seal.ts';
import { nameHash } from '../../protocol/relay/drive/names.ts';
import { driveString } from '../../protocol/relay/drive/framing.ts';
import { signDrive, verifyDrive, driveHash } from '../../protocol/relay/drive/sign.ts';
import { manifestProblems } from '../../protocol/relay/drive/manifest.ts';
import { recordContext, openRecord } from '../../protocol/relay/drive/record.ts';
import * as nd from '../../harness/impl/noble-drive.ts';
import { check, same, type Json, b64u, utf8, derived } from './check.ts';
import { profile, ALICE, BOB, aliceKey, bobKey, xKey, bytesOf, ephemeral, fail } from './fixtures.ts';
import { emit } from './emit.ts';

type Obj = Record<string, unknown>;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const idHex = (label: string, bytes = 16): string => hex(derived(`svc-conformance/${label}`, bytes));
export const NODE = idHex('drive-node');
export const FOLDER = idHex('drive-folder');
export const folderKey = xKey('drive-folder-x25519');
export const nodeKey = xKey('drive-node-x25519');
/** Seals with the fixed ephemeral key and nonce, checked to open with noble. */
export function fixedSeal(kind: 'key' | 'name' | 'record' | 'group' | 'message', to: { priv: Uint8Array; pub: Uint8Array }, plaintext: Uint8Array, ctx: Uint8Array, label: string): Json {
  const payload = sealTo(profile, kind, to.pub, plaintext, ctx, { ephemeralPrivate: ephemeral.priv, nonce: bytesOf('seal-nonce') });
  const domain = kind === 'message' ? profile.ids.message_seal_domain : nd.sealDomainOf(profile, kind);
  same(`${label}: opens with noble`, hex(nd.openSeal(domain, to.priv, payload as unknown as Obj, ctx) ?? new Uint8Array([0])), hex(plaintext));
  return payload as unknown as Json;
}

// Chunks: the bucket edges (empty, one byte, a full bucket, one byte over).
const chunkCtx = driveContext(ALICE, NODE, 'content', 1);
const contentKey = bytesOf('drive-content-key');
const chunks = [0, 1, 4092, 4093].map((size) => {
  const plaintext = utf8('svc drive chunk '.repeat(Math.ceil(size / 16)).slice(0, size));
  const chunk = sealChunk(profile, contentKey, plaintext, chunkCtx, bytesOf('drive-chunk-nonce'));
  same(`drive chunk ${size}: noble seals the same bytes`, hex(nd.sealChunk(profile, contentKey, plaintext, chunkCtx, bytesOf('drive-chunk-nonce'))), hex(chunk));
  same(`drive chunk ${size}: opens (core)`, hex(openChunk(profile, contentKey, chunk, chunkCtx) ?? new Uint8Array([0])), hex(plaintext));
  same(`drive chunk ${size}: id (noble)`, nd.sha256Hex(chunk), chunkId(chunk));
  return { name: `size-${size}`, size, key: b64u(contentKey), context: b64u(chunkCtx), chunk: b64u(chunk), hash: chunkId(chunk), plaintext: b64u(plaintext) };
});
emit(
  'drive-chunks',
  'drive-chunks',
  `Encrypted chunks (rules ra.drive.chunk, ra.drive.context): nonce || XChaCha20-Poly1305(key, nonce, uint32 length || plaintext || zero padding to a multiple of 4096, AAD \`${profile.name}/drive/chunk/v1\` LF || context); the id is the hex SHA-256 of the stored bytes. The nonce is fixed (fixtures/keys.json drive-chunk-nonce) so the vectors are reproducible; a writer draws one per chunk.`,
  { vectors: chunks },
  chunks.length,
);

// Pages and manifests, signed by alice (the drive owner).
const refs = chunks.slice(0, 3).map((c) => ({ id: c.hash, size: Buffer.from(c.chunk, 'base64url').length }));
const page = { format: 1, drive: ALICE, node: NODE, chunks: refs };
const pageHash = driveHash(profile, 'page', page);
same('drive page: address (noble)', nd.hashOf(profile, 'page', page), pageHash);
const envelope = (purpose: string, kind: 'key' | 'name', to: { priv: Uint8Array; pub: Uint8Array }, plaintext: Uint8Array) =>
  fixedSeal(kind, to, plaintext, driveContext(ALICE, NODE, purpose, 1), `drive manifest ${purpose}`);
const NAME = 'report.pdf';
const named = { folder: FOLDER, name: envelope('name', 'name', folderKey, utf8(NAME)), name_hash: nameHash(profile, folderKey.priv, NAME) ?? fail('name hash') };
const nodeEnv = { node_key: envelope('node-key', 'key', folderKey, nodeKey.priv) };
const base = { format: 1, drive: ALICE, node: NODE, author: ALICE, generation: 1, parent: '', folder: '', name_hash: '', count: 0, pages: [] as string[] };
const V1 = idHex('drive-version-1');
const V2 = idHex('drive-version-2');
const fileContent = { count: refs.length, pages: [pageHash] };
const cases: [string, Obj, boolean][] = [
  ['root-create', { ...base, version: V1, operation: 'create', kind: 'folder', mode: '', ...nodeEnv }, true],
  ['file-create', { ...base, version: V1, operation: 'create', kind: 'file', mode: 'replace', ...named, ...nodeEnv, content_key: envelope('content-key', 'key', nodeKey, contentKey), ...fileContent }, true],
  ['replace', { ...base, version: V2, parent: V1, operation: 'replace', kind: 'file', mode: 'replace', ...fileContent }, true],
  ['move', { ...base, version: V2, parent: V1, operation: 'move', kind: 'folder', mode: '', ...named, ...nodeEnv }, true],
  ['remove', { ...base, version: V2, parent: V1, operation: 'remove', kind: 'file', mode: 'append' }, true],
  ['public-file-create', { ...base, version: V1, operation: 'create', kind: 'file', mode: 'replace', folder: FOLDER, name_hash: named.name_hash, ...fileContent, public: true, plain_name: NAME, plain_key: b64u(contentKey) }, true],
  ['replace-with-a-name', { ...base, version: V2, parent: V1, operation: 'replace', kind: 'file', mode: 'replace', ...named, ...fileContent }, false],
  ['public-with-sealed-name', { ...base, version: V1, operation: 'create', kind: 'folder', mode: '', ...named, public: true, plain_name: NAME }, false],
];
const manifests = cases.map(([name, fields, valid]) => {
  const manifest: Obj = { ...fields, signature: signDrive(profile, "manifest", fields, aliceKey.seed) };
  const canonical = driveString(profile, 'manifest', manifest);
  same(`drive manifest ${name}: string (noble)`, hex(nd.driveString(profile, 'manifest', manifest)), hex(canonical));
  check(verifyDrive(profile, 'manifest', manifest, aliceKey.pub) && nd.verifySigned(profile, 'manifest', manifest, aliceKey.pub), `drive manifest ${name}: signature`);
  same(`drive manifest ${name}: hash (noble)`, nd.hashOf(profile, 'manifest', manifest), driveHash(profile, 'manifest', manifest));
  same(`drive manifest ${name}: valid`, manifestProblems(manifest).length === 0, valid);
  const pages = (manifest.pages as string[]).length > 0 ? [page] : null;
  return { name, manifest, pages, seed: b64u(aliceKey.seed), public_key: b64u(aliceKey.pub), canonical: hex(canonical), hash: driveHash(profile, 'manifest', manifest), ...(valid ? {} : { valid }) };
});
emit(
  'drive-manifests',
  'drive-manifests',
  `Chunk-list pages and signed manifests (rules ra.drive.page, ra.drive.manifest, ra.drive.manifest-pages, ra.drive.manifest-shape): \`canonical\` is the framed signed string in hex, a page's \`hash\` the SHA-256 of it, a manifest's \`hash\` the SHA-256 of \`${profile.name}/drive/manifest-hash/v1\` LF, the string and the raw signature. Sealed names and keys use the fixed ephemeral key and nonce of the encryption vectors. \`valid\` false: the manifest is signed but its fields do not fit its operation.`,
  { pages: [{ page, canonical: hex(driveString(profile, 'page', page)), hash: pageHash }], manifests },
  1 + manifests.length,
);

// Append records: bob's chain of two chunk records, then a sealed one.
const records: Json[] = [];
let previous = '';
for (const [sequence, sealed] of [
  [1, false],
  [2, false],
  [3, true],
] as const) {
  const fields: Obj = { format: 1, drive: ALICE, node: NODE, author: BOB, generation: 1, sequence, previous, chunks: sealed ? [] : [refs[sequence - 1]] };
  const plaintext = utf8(`svc sealed contribution ${sequence}`);
  if (sealed) fields.sealed = fixedSeal('record', nodeKey, plaintext, recordContext(fields), `drive record ${sequence}`);
  const record: Obj = { ...fields, signature: signDrive(profile, "record", fields, bobKey.seed) };
  const hash = driveHash(profile, 'record', record);
  same(`drive record ${sequence}: hash (noble)`, nd.hashOf(profile, 'record', record), hash);
  check(nd.verifySigned(profile, 'record', record, bobKey.pub), `drive record ${sequence}: signature (noble)`);
  if (sealed) same(`drive record ${sequence}: opens (core)`, hex(openRecord(profile, record, nodeKey.priv) ?? new Uint8Array([0])), hex(plaintext));
  records.push({
    name: `${sealed ? 'sealed' : 'chunks'}-${sequence}`,
    record,
    private_key: b64u(bobKey.seed),
    public_key: b64u(bobKey.pub),
    canonical: b64u(driveString(profile, 'record', record)),
    hash,
    ...(sealed ? { node_private: b64u(nodeKey.priv), plaintext: b64u(plaintext) } : {}),
  });
  previous = hash;
}
emit(
  'drive-records',
  'drive-records',
  `Append records chained per author (rule ra.drive.record): \`canonical\` is the framed signed string in base64url, \`hash\` the SHA-256 of \`${profile.name}/drive/record-hash/v1\` LF, the string and the raw signature, and each record's \`previous\` the hash of the author's last one. The sealed record opens with \`node_private\` under \`${profile.name}/drive/record/v1\` and the context purpose \`record:<author>:<sequence>:<previous>\`.`,
  { vectors: records },
  records.length,
);
