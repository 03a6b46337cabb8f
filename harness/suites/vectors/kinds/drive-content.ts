// Drive content vectors: drive-chunks.json (encrypted chunks), drive-manifests.json (pages and
// signed manifests) and drive-records.json (chained append records). Each is checked by the
// protocol core and by harness/impl/noble-drive.ts; the rules cited come from spec/drive.yaml.
import type { Check } from '../../../run/model.ts';
import { driveSpec } from '../../../../schemas/ts/drive.ts';
import { decodeBase64Any, encodeBase64url } from '../../../../protocol/common/base64.ts';
import * as noble from '../../../impl/noble.ts';
import * as nd from '../../../impl/noble-drive.ts';
import { ruleIds, vectorCheck, listOf, nameOf, type KindContext, type Expect } from '../check.ts';

type Obj = Record<string, unknown>;
export const bytes = (text: unknown): Uint8Array => decodeBase64Any(String(text ?? '')) ?? new Uint8Array();
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const rulesOf = (...sections: { rule: string }[]) => ruleIds(sections.map((s) => s.rule));

/** The framed context's fields, to rebuild it from its parts. */
function contextFields(ctx: Uint8Array): string[] {
  const buf = Buffer.from(ctx);
  const out: string[] = [];
  for (let at = 0; at + 4 <= buf.length; ) {
    const n = buf.readUInt32BE(at);
    out.push(buf.subarray(at + 4, at + 4 + n).toString('utf8'));
    at += 4 + n;
  }
  return out;
}

export function driveChunkChecks(kc: KindContext): Check[] {
  const { profile, core } = kc;
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i, 'size'), rulesOf(driveSpec.chunk, driveSpec.context), (expect) => {
      const [key, ctx, chunk] = [bytes(v.key), bytes(v.context), bytes(v.chunk)];
      const [drive, node, purpose, generation] = contextFields(ctx);
      expect.equal('context rebuilt from its fields', hex(core.drive.driveContext(drive!, node!, purpose!, Number(generation))), hex(ctx));
      expect.that(core.drive.validChunkSize(chunk.length), `stored size ${chunk.length} is off the bucket grid`);
      const plain = core.drive.openChunk(profile, key, chunk, ctx);
      const other = nd.openChunk(profile, key, chunk, ctx);
      expect.agree('opens', plain !== undefined, other !== undefined, true);
      if (!plain || !other) return;
      expect.equal('plaintext size', plain.length, v.size).equal('plaintexts agree', hex(plain), hex(other));
      if (v.plaintext !== undefined) expect.equal('plaintext', encodeBase64url(plain), v.plaintext);
      const nonce = chunk.subarray(0, driveSpec.chunk.nonce_bytes);
      expect.equal('sealed again under its nonce (core)', hex(core.drive.sealChunk(profile, key, plain, ctx, nonce)), hex(chunk));
      expect.equal('sealed again under its nonce (noble)', hex(nd.sealChunk(profile, key, plain, ctx, nonce)), hex(chunk));
      expect.equal('id (core)', core.drive.chunkId(chunk), v.hash).equal('id (noble)', nd.sha256Hex(chunk), v.hash);
      const tampered = chunk.slice();
      tampered[tampered.length - 1]! ^= 1;
      expect.agree('a flipped tag byte opens', core.drive.openChunk(profile, key, tampered, ctx) !== undefined, nd.openChunk(profile, key, tampered, ctx) !== undefined, false);
    }),
  );
}

/** The signed string, signature, signing key and hash of one signed drive object, by both implementations. */
export function signedObject(kc: KindContext, expect: Expect, which: 'manifest' | 'record' | 'share', object: Obj, v: Obj, canonical: string): void {
  const { profile, core } = kc;
  const encode = (b: Uint8Array) => (which === 'record' ? encodeBase64url(b) : hex(b));
  expect.equal('signed string (core)', encode(core.drive.driveString(profile, which, object)), canonical);
  expect.equal('signed string (noble)', encode(nd.driveString(profile, which, object)), canonical);
  const seed = bytes(v.seed ?? v.private_key);
  const pub = bytes(v.public_key);
  expect.equal('public key of the seed (core)', encodeBase64url(core.publicKeyFromSeed(seed)), v.public_key);
  expect.equal('public key of the seed (noble)', encodeBase64url(noble.publicKey(seed)), v.public_key);
  expect.agree('signature verifies', core.drive.verifyDrive(profile, which, object, pub), nd.verifySigned(profile, which, object, pub), true);
  expect.equal('hash (core)', core.drive.driveHash(profile, which, object), v.hash).equal('hash (noble)', nd.hashOf(profile, which, object), v.hash);
}

export function driveManifestChecks(kc: KindContext): Check[] {
  const { profile, core } = kc;
  const file = kc.file as { pages?: Obj[]; manifests?: Obj[] };
  const pages = (file.pages ?? []).map((v, i) =>
    vectorCheck(kc, `page:${i}`, rulesOf(driveSpec.strings.page, driveSpec.format), (expect) => {
      const page = v.page as Obj;
      expect.equal('page string (core)', hex(core.drive.driveString(profile, 'page', page)), v.canonical);
      expect.equal('page string (noble)', hex(nd.driveString(profile, 'page', page)), v.canonical);
      expect.equal('address (core)', core.drive.driveHash(profile, 'page', page), v.hash).equal('address (noble)', nd.hashOf(profile, 'page', page), v.hash);
    }),
  );
  const manifests = (file.manifests ?? []).map((v, i) =>
    vectorCheck(kc, `manifest:${nameOf(v, i)}`, ruleIds(['ra.drive.manifest', 'ra.drive.manifest-shape', 'ra.drive.manifest-pages', 'ra.drive.framing']), (expect) => {
      const m = v.manifest as Obj;
      signedObject(kc, expect, 'manifest', m, v, String(v.canonical));
      expect.equal('shape problems', core.drive.manifestProblems(m).length === 0, v.valid !== false);
      if (!Array.isArray(v.pages)) return;
      const list = v.pages as Obj[];
      const verdict = core.drive.verifyPages(profile, m, list);
      expect.that(verdict.ok, `pages (core): ${verdict.ok ? '' : verdict.reason}`);
      const hashes = list.map((p) => nd.hashOf(profile, 'page', p));
      const total = list.reduce((n, p) => n + (p.chunks as unknown[]).length, 0);
      expect.equal('pages (noble)', { hashes, total }, { hashes: m.pages, total: m.count });
    }),
  );
  return [...pages, ...manifests];
}

export function driveRecordChecks(kc: KindContext): Check[] {
  const { profile, core } = kc;
  const list = listOf(kc.file);
  return list.map((v, i) => {
    const sealed = v.node_private !== undefined;
    const rules = ruleIds(['ra.drive.record', 'ra.drive.framing', ...(sealed ? ['ra.drive.seal', 'ra.drive.context'] : [])]);
    return vectorCheck(kc, nameOf(v, i, 'hash'), rules, (expect) => {
      const r = v.record as Obj;
      signedObject(kc, expect, 'record', r, v, String(v.canonical));
      expect.equal('shape problems', core.drive.recordProblems(r), []);
      const prev = list.slice(0, i).findLast((p) => (p.record as Obj).author === r.author && (p.record as Obj).node === r.node);
      const last = prev ? [Number((prev.record as Obj).sequence), String(prev.hash)] : [0, ''];
      expect.equal('continues the author chain', core.drive.chainProblem(r, last[0] as number, last[1] as string) ?? 'yes', 'yes');
      if (!sealed) return;
      const key = bytes(v.node_private);
      const mine = core.drive.openRecord(profile, r, key);
      const theirs = nd.openSeal(nd.sealDomainOf(profile, 'record'), key, r.sealed as Obj, nd.recordContext(r));
      expect.agree('sealed payload opens', mine !== undefined, theirs !== undefined, true);
      expect.equal('payloads agree', mine && hex(mine), theirs && hex(theirs));
      if (v.plaintext !== undefined) expect.equal('payload', mine && encodeBase64url(mine), v.plaintext);
    });
  });
}
