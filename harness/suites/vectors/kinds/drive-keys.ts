// Drive key vectors: drive-seals.json (seals under the drive and message domains), drive-names.json
// (names and their lookup tokens), drive-shares.json (signed shares, password links, guest
// authors), groups.json and group-keys.json (rosters and keyrings), pow.json and pow-clamp.json.
import type { Check } from '../../../run/model.ts';
import { driveSpec } from '../../../../schemas/ts/drive.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import * as noble from '../../../impl/noble.ts';
import * as nd from '../../../impl/noble-drive.ts';
import { vectorCheck, listOf, nameOf, type KindContext } from '../check.ts';
import { bytes, rulesOf, signedObject } from './drive-content.ts';

type Obj = Record<string, unknown>;
const hex = (b: Uint8Array | undefined): string | undefined => b && Buffer.from(b).toString('hex');

export function driveSealChecks(kc: KindContext): Check[] {
  const { profile, core } = kc;
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i, 'domain'), rulesOf(driveSpec.seals), (expect) => {
      const kind = core.drive.sealKindOf(profile, String(v.domain));
      expect.that(kind !== undefined, `${String(v.domain)} is no seal domain under ${profile.name}`);
      if (!kind) return;
      const [priv, ctx, payload] = [bytes(v.private_key), bytes(v.context), v.payload as Obj];
      expect.equal('recipient key (core)', encodeBase64url(core.drive.x25519PublicKey(priv)), v.public_key);
      expect.equal('recipient key (noble)', encodeBase64url(noble.x25519PublicKeyOf(priv)), v.public_key);
      const mine = core.drive.openSeal(profile, kind, priv, payload as never, ctx);
      const theirs = nd.openSeal(String(v.domain), priv, payload, ctx);
      expect.agree('opens', mine !== undefined, theirs !== undefined, true);
      expect.equal('plaintext (core)', mine && encodeBase64url(mine), v.plaintext).equal('plaintext (noble)', theirs && encodeBase64url(theirs), v.plaintext);
      const other = new Uint8Array([...ctx, 0x78]);
      expect.agree('opens under another context', core.drive.openSeal(profile, kind, priv, payload as never, other) !== undefined, nd.openSeal(String(v.domain), priv, payload, other) !== undefined, false);
      if (v.ephemeral_private_key === undefined) return;
      const fixed = { ephemeralPrivate: bytes(v.ephemeral_private_key), nonce: bytes(payload.nonce) };
      expect.equal('sealed again with its ephemeral key', core.drive.sealTo(profile, kind, bytes(v.public_key), bytes(v.plaintext), ctx, fixed), payload);
    }),
  );
}

export function driveNameChecks(kc: KindContext): Check[] {
  const { profile, core } = kc;
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i, 'name'), rulesOf(driveSpec.names), (expect) => {
      const name = String(v.name);
      const key = bytes(v.private_key);
      expect.equal('normalized (core)', core.drive.normalizeName(name), v.normalized).equal('normalized (noble)', nd.validName(name), v.normalized);
      expect.equal('hash (core)', core.drive.nameHash(profile, key, name), v.hash).equal('hash (noble)', nd.nameHash(profile, key, name), v.hash);
    }),
  );
}

export function driveShareChecks(kc: KindContext): Check[] {
  const { core } = kc;
  const file = kc.file as { shares?: Obj[]; guests?: Obj[] };
  const shares = (file.shares ?? []).map((v, i) => {
    const password = typeof v.password === 'string';
    return vectorCheck(kc, `share:${nameOf(v, i)}`, rulesOf(driveSpec.strings.share, driveSpec.format, ...(password ? [driveSpec.link_kdf] : [])), async (expect) => {
      const s = v.share as Obj;
      signedObject(kc, expect, 'share', s, v, String(v.canonical));
      expect.equal('shape problems', core.drive.shareProblems(s), []);
      if (!password) return;
      const mine = await core.drive.deriveLink(String(v.password), bytes(s.salt), String(s.kdf));
      const theirs = await nd.linkSecrets(String(v.password), bytes(s.salt));
      expect.equal('verifier hash (core)', core.drive.verifierHash(mine.verifier), s.verifier_hash).equal('verifier hash (noble)', theirs.verifierHash, s.verifier_hash);
      expect.equal('link key and verifier', [encodeBase64url(mine.key), encodeBase64url(mine.verifier)], [v.link_key, v.verifier]);
      expect.equal('link key and verifier (noble)', [encodeBase64url(theirs.key), encodeBase64url(theirs.verifier)], [v.link_key, v.verifier]);
    });
  });
  const guests = (file.guests ?? []).map((v, i) =>
    vectorCheck(kc, `guest:${i}`, rulesOf(driveSpec.guest), (expect) => {
      const pub = bytes(v.public_key);
      expect.equal('guest key of the seed', encodeBase64url(noble.publicKey(bytes(v.seed))), v.public_key);
      expect.equal('author (core)', core.drive.guestAuthor(pub), v.author).equal('author (noble)', nd.guestAuthor(pub), v.author);
      expect.equal('key read from the author', hex(core.drive.guestKey(String(v.author))), hex(pub));
    }),
  );
  return [...shares, ...guests];
}

export function groupChecks(kc: KindContext): Check[] {
  const { profile, core } = kc;
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i), rulesOf(driveSpec.strings['group-roster']), (expect) => {
      const g = v.group as Obj;
      const lines = (b: Uint8Array) => Buffer.from(b).toString('utf8');
      expect.equal('lines (core)', lines(core.drive.driveString(profile, 'group-roster', g)), v.canonical).equal('lines (noble)', lines(nd.driveString(profile, 'group-roster', g)), v.canonical);
      if (v.public_key !== undefined) {
        const pub = bytes(v.public_key);
        expect.agree('signature verifies', core.drive.verifyDrive(profile, 'group-roster', g, pub), nd.verifySigned(profile, 'group-roster', g, pub), true);
      } else expect.equal('signature bytes', bytes(g.signature).length, 64);
    }),
  );
}

export function groupKeyChecks(kc: KindContext): Check[] {
  const { profile, core } = kc;
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i), rulesOf(driveSpec.strings['group-keys'], driveSpec.seals), (expect) => {
      const [ring, pub] = [v.keyring as Obj, v.public as Obj];
      const lines = (b: Uint8Array) => Buffer.from(b).toString('utf8');
      expect.equal('keyring lines (core)', lines(core.drive.driveString(profile, 'group-keys', ring)), v.canonical).equal('keyring lines (noble)', lines(nd.driveString(profile, 'group-keys', ring)), v.canonical);
      expect.equal('public lines (core)', lines(core.drive.driveString(profile, 'group-key', pub)), v.public_canonical).equal('public lines (noble)', lines(nd.driveString(profile, 'group-key', pub)), v.public_canonical);
      const member = bytes(v.member_private);
      const mine = core.drive.openKeyring(profile, ring, String(v.member), member);
      const theirs = nd.keyringKeys(profile, ring, String(v.member), member);
      const shown = (keys: { epoch: number; private: Uint8Array }[] | undefined) => keys?.map((k) => ({ epoch: k.epoch, private: encodeBase64url(k.private) }));
      expect.equal('opened (core)', mine.ok ? shown(mine.keys) : mine.reason, v.opened).equal('opened (noble)', shown(theirs), v.opened);
      if (v.public_key === undefined) return;
      const key = bytes(v.public_key);
      for (const [which, doc] of [['group-keys', ring] as const, ['group-key', pub] as const]) {
        expect.agree(`${which} signature verifies`, core.drive.verifyDrive(profile, which, doc, key), nd.verifySigned(profile, which, doc, key), true);
      }
    }),
  );
}

export function powChecks(kc: KindContext): Check[] {
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i, 'token'), rulesOf(driveSpec.pow), (expect) => {
      const [token, solution, bits] = [String(v.token), String(v.solution), Number(v.bits)];
      expect.agree('solves', kc.core.drive.checkPow(token, solution, bits), nd.powValid(token, solution, bits), v.valid as boolean);
    }),
  );
}

export function powClampChecks(kc: KindContext): Check[] {
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i), rulesOf(driveSpec.pow), (expect) => {
      expect.equal('clamped (core)', kc.core.drive.clampPowBits(Number(v.input)), v.output).equal('clamped (noble)', nd.powClamp(Number(v.input)), v.output);
    }),
  );
}
