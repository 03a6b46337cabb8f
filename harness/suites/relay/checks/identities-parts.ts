// What a registration and a rotation must carry besides their envelopes, each part wrong alone
// with the envelope valid: a refusal (400, or 401 where the part is a signature) that changes
// nothing, then the right request is accepted.
// - POST /identities (ra.identities.hosted): "the identity must be under a domain in
//   HOSTED_DOMAINS; a signed identity_document is supplied", and "400 (malformed, missing fields)".
// - POST /identities/:identity/rotate (ra.identities.rotate): "identity_document (signed by the new
//   key, with previous_keys), new_public_key, rotation_signature (old key ...)".
// And the Host-routed capabilities.json (ra.identities.well-known), with and without the owner's
// file: "filled in where the file does not set them; with no file only those defaults are served".
// And an identity not hosted here (ra.identities.get): "404 when not hosted here", its other
// operations refused as a client's error, never answered or met with a 5xx.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { signDocument } from '../../../../protocol/common/document.ts';
import { adminEnvelope, newRelayIdentity, registration, rotation, signingKey, type RelayIdentity } from '../../../actors/relay/index.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import { vocabulary } from '../../../../schemas/ts/vocabulary.ts';
import { relayCheck } from '../check.ts';
import { CheckSkip, hostedDomain, isObject, refused, safeJson, said, inviteOf, type RelayTarget, type Session } from '../driver.ts';
import { LANE as SYSTEM_LANE } from './system-files.ts';

type Doc = Record<string, unknown>;
const seed = (): Uint8Array => new Uint8Array(randomBytes(32));
/** A refusal for a wrong part: 400, or 401 when what is wrong is a signature the relay checks. */
const refusedPart = (status: number): boolean => status === 400 || status === 401;

async function registered(s: Session, identity: string): Promise<string | undefined> {
  const g = safeJson(await s.relay.get(`/identities/${encodeURIComponent(identity)}`));
  return isObject(g) && typeof g.public_key === 'string' ? g.public_key.replace(/=+$/, '') : undefined;
}

/** A test identity published under the hosted domain but not registered, and its right registration. */
async function unregistered(s: Session, t: RelayTarget) {
  const facts = (await s.facts()).relay;
  const domain = await hostedDomain(s);
  const invite = inviteOf(t);
  const id = await s.identity('relay', { register: false });
  return { facts, domain, invite, id, right: registration(s.profile, id, facts.relayAddress, invite) };
}

export function registerPartsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/register-parts',
    title:
      'a hosted registration with a valid envelope but no identity_document, a document naming another identity, one of another key or of no key, one whose signature fails, or an identity that is not one label under a hosted domain (another domain, the domain as a suffix without its dot, two labels), is refused and registers nothing; the right one then answers 201 with the identity, key, encryption key and relay it registered',
    rules: ['ra.identities.hosted'],
    context: ['ra.identities.signature'],
    run: async (s, e) => {
      const { facts, domain, invite, id, right } = await unregistered(s, t);
      const doc = right.identity_document as Doc;
      const other = newRelayIdentity(`t${randomBytes(5).toString('hex')}.${domain}`);
      const { identity_document: _d, ...bare } = right;
      const wrong: Array<[string, Record<string, unknown>]> = [
        ['no identity_document', bare],
        ['identity_document null', { ...right, identity_document: null }],
        ['identity_document a list', { ...right, identity_document: [doc] }],
        ['a document naming another identity', { ...right, identity_document: signDocument({ ...doc, identity: other.identity }, id.seed) }],
        ['a document of another key', { ...right, identity_document: signDocument({ ...doc, public_key: signingKey(other) }, other.seed) }],
        ['a document whose signature fails', { ...right, identity_document: { ...doc, updated_at: '2000-01-01T00:00:00Z' } }],
        ['a document whose public_key is no key', { ...right, identity_document: signDocument({ ...doc, public_key: 'not-a-key' }, id.seed) }],
      ];
      for (const [what, body] of wrong) {
        const r = await s.relay.post('/identities', body);
        e.that(refusedPart(r.status), `a registration with ${what}: ${said(r)}, not refused 400`);
      }
      // Names that are not one label under a hosted domain, each with its envelope signed for it:
      // another domain, the domain's name as a suffix without the dot, and two labels under it.
      const hex = () => randomBytes(5).toString('hex');
      for (const [name, what] of [
        [`t${hex()}.not-hosted.example`, 'under no HOSTED_DOMAINS domain'],
        [`t${hex()}${domain}`, `ending in ${domain} without the dot before it`],
        [`a.t${hex()}.${domain}`, `two labels under ${domain}`],
      ]) {
        const stray = newRelayIdentity(name!);
        const strayR = await s.relay.post('/identities', registration(s.profile, stray, facts.relayAddress, invite));
        e.that(strayR.status === 400, `a hosted registration of ${stray.identity}, ${what}: ${said(strayR)}, not 400`);
        e.that((await registered(s, stray.identity)) === undefined, `${stray.identity} was registered all the same`);
      }
      e.that((await registered(s, id.identity)) === undefined, `after the refused registrations ${id.identity} is registered`);
      const ok = await s.relay.post('/identities', right);
      const b = safeJson(ok);
      if (!e.that(ok.status === 201 && isObject(b), `the registration as made: ${said(ok)}, not 201`)) return;
      const body = b as Doc;
      e.that(body.identity === id.identity, `the 201 names identity ${String(body.identity)}, not ${id.identity}`);
      e.that(String(body.public_key).replace(/=+$/, '') === signingKey(id), `the 201 names public_key ${String(body.public_key)}, not the one registered`);
      e.that(
        String(body.encryption_public_key).replace(/=+$/, '') === right.encryption_public_key,
        `the 201 names encryption_public_key ${String(body.encryption_public_key)}, not the one registered`,
      );
      e.that(body.relay === facts.relayAddress, `the 201 names relay ${String(body.relay)}, not the relay_address ${facts.relayAddress} its banner publishes`);
      e.that(typeof body.created_at === 'string' && Math.abs(Date.parse(body.created_at) - Date.now()) < 600_000, `created_at ${String(body.created_at)} is not this registration's time`);
    },
  });
}

export function registerMalformedCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/register-malformed',
    title:
      'a registration that is not a JSON object, names no valid service ID, carries a public_key or encryption_public_key that is no key, an unsupported dns_provider, or dns_provider or dns_token alone, is refused 400 (401 where only the signature can fail) and registers nothing; one without encryption_public_key, signed with it empty, registers',
    rules: ['ra.identities.hosted', 'ra.identities.dns-provider'],
    context: ['ra.identities.signature', 'ra.signing.identity-registration'],
    run: async (s, e) => {
      const { facts, domain, invite, id, right } = await unregistered(s, t);
      // The envelope signed over the lines as sent, so only the malformed part is wrong.
      const resigned = (fields: Record<string, unknown>) => {
        const body = { ...right, ...fields };
        const lines = { identity: body.identity, public_key: body.public_key, encryption_public_key: body.encryption_public_key, relay_address: facts.relayAddress };
        return { ...body, ...adminEnvelope(s.profile, 'identity-registration', lines as Record<string, string>, id.seed) };
      };
      const bad = `Not_A_Name.${domain}`;
      const cases: Array<[string, string | Record<string, unknown>, (status: number) => boolean]> = [
        ['a body that is not JSON', '{"identity":', (x) => x === 400],
        ['a JSON array', '[]', (x) => x === 400],
        [`identity ${bad}`, resigned({ identity: bad }), (x) => x === 400],
        ['a public_key that is no key', resigned({ public_key: 'not-a-key' }), refusedPart],
        ['an encryption_public_key that is no key', resigned({ encryption_public_key: 'not-a-key' }), (x) => x === 400],
        ['an unsupported dns_provider', resigned({ dns_provider: 'no-such-provider.example', dns_token: 'token' }), (x) => x === 400],
        // Neither mode: a hosted registration omits both, a DNS one includes both.
        ['an unsupported dns_provider and no dns_token', resigned({ dns_provider: 'no-such-provider.example' }), (x) => x === 400],
        ['a dns_token and no dns_provider', resigned({ dns_token: 'token' }), (x) => x === 400],
      ];
      for (const [what, body, ok] of cases) {
        const r = await s.relay.post('/identities', body);
        e.that(ok(r.status), `a registration with ${what}: ${said(r)}, not refused 400`);
      }
      e.that((await registered(s, id.identity)) === undefined, `after the refused registrations ${id.identity} is registered`);
      e.that((await registered(s, bad.toLowerCase())) === undefined, `after the refused registrations ${bad} is registered`);
      // encryption_public_key is optional: without one, the signed lines carry it empty.
      const plain = await s.identity('relay', { register: false });
      const { encryption_public_key: _enc, ...noEnc } = registration(s.profile, plain, facts.relayAddress, invite);
      const lines = { identity: plain.identity, public_key: noEnc.public_key as string, encryption_public_key: '', relay_address: facts.relayAddress };
      const r = await s.relay.post('/identities', { ...noEnc, ...adminEnvelope(s.profile, 'identity-registration', lines, plain.seed) });
      const b = safeJson(r);
      e.that(
        r.status === 201 && isObject(b) && (b.encryption_public_key === null || b.encryption_public_key === undefined || b.encryption_public_key === ''),
        `a registration without encryption_public_key, its lines carrying it empty: ${said(r)}, not 201 without one`,
      );
    },
  });
}

export function rotateDocumentCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/rotate-document',
    title:
      'a rotation whose old-key signature is valid but whose new document is signed by the old key, lists no previous_keys, names another identity, or carries another key than new_public_key, is refused and changes no key; the right one then rotates',
    rules: ['ra.identities.rotate'],
    run: async (s, e) => {
      const facts = (await s.facts()).relay;
      if (!facts.hostedDomains[0]) throw new CheckSkip('the relay publishes no hosted_domains in its banner: rotation is not checked');
      const id: RelayIdentity = await s.identity();
      const newSeed = seed();
      const right = rotation(s.profile, id, facts.relayAddress, newSeed);
      const doc = right.identity_document as Doc;
      const { previous_keys: _p, ...unlisted } = doc;
      const third = seed();
      const thirdKey = signingKey(newRelayIdentity(id.identity, third));
      const wrong: Array<[string, Doc]> = [
        ['signed by the old key', signDocument(doc, id.seed)],
        ['listing no previous_keys', signDocument(unlisted, newSeed)],
        ['naming another identity', signDocument({ ...doc, identity: `x${id.identity}` }, newSeed)],
        ['of another key than new_public_key', signDocument({ ...doc, public_key: thirdKey }, third)],
      ];
      const before = await registered(s, id.identity);
      for (const field of ['identity_document', 'new_public_key', 'rotation_signature', 'issued_at', 'nonce']) {
        const { [field]: _gone, ...rest } = right;
        const r = await s.relay.post(`/identities/${id.identity}/rotate`, rest);
        e.that(r.status === 400, `a rotation without ${field}: ${said(r)}, not 400`);
      }
      for (const [what, value] of [
        ['null', null],
        ['a list', [doc]],
      ] as const) {
        const r = await s.relay.post(`/identities/${id.identity}/rotate`, { ...right, identity_document: value });
        e.that(r.status === 400, `a rotation whose identity_document is ${what}: ${said(r)}, not 400`);
      }
      for (const [what, value] of [
        ['3 bytes', 'AAAA'],
        ['not base64', 'not base64!'],
      ]) {
        const r = await s.relay.post(`/identities/${id.identity}/rotate`, { ...right, rotation_signature: value });
        e.that(refusedPart(r.status), `a rotation whose rotation_signature is ${what}: ${said(r)}, not refused`);
      }
      for (const [what, document] of wrong) {
        const r = await s.relay.post(`/identities/${id.identity}/rotate`, { ...right, identity_document: document });
        e.that(refusedPart(r.status), `a rotation whose new document is ${what}: ${said(r)}, not refused 400`);
        const now = await registered(s, id.identity);
        e.that(now === before, `after the rotation whose new document is ${what}, the relay serves the key ${String(now)}, not the old ${String(before)}`);
      }
      const r = await s.relay.post(`/identities/${id.identity}/rotate`, right);
      e.that(r.status >= 200 && r.status < 300, `the rotation as made: ${said(r)}`);
      e.that((await registered(s, id.identity)) === right.new_public_key, 'after the rotation as made the relay does not serve the new key');
    },
  });
}

/** GET a Host-routed document of `identity` (Host may carry a port, as a browser sends it). */
async function hostRouted(s: Session, path: string, host: string): Promise<{ status: number; body: Doc | undefined; said: string }> {
  const r = await s.relay.get(path, { host });
  const b = safeJson(r);
  return { status: r.status, body: isObject(b) ? b : undefined, said: said(r) };
}

export function capabilitiesDefaultsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/capabilities-defaults',
    lane: SYSTEM_LANE,
    title:
      "capabilities.json with no file serves the OAUTH_BRIDGE_URL default alone; a file's own endpoints.oauth_bridge and other fields are served as written, and a file without one gets the default filled in; id.json answers a Host with a port",
    rules: ['ra.identities.well-known'],
    context: ['ra.system.validated'],
    run: async (s, e) => {
      const bridge = t.declared.oauthBridgeUrl;
      if (!bridge) throw new CheckSkip('the target declares no OAUTH_BRIDGE_URL (--relay-oauth-bridge-url): the defaults are not judged');
      const id = await s.identity();
      const path = s.profile.ids.capabilities_path;
      const none = await hostRouted(s, path, id.identity);
      const endpoints = (b: Doc | undefined): Doc | undefined => (isObject(b?.endpoints) ? (b!.endpoints as Doc) : undefined);
      e.that(
        none.status === 200 && endpoints(none.body)?.oauth_bridge === bridge && Object.keys(none.body!).every((k) => k === 'endpoints'),
        `with no file: ${none.said}, not only endpoints.oauth_bridge ${bridge}`,
      );
      const own = { version: 1, note: 'kept as written', endpoints: { oauth_bridge: 'https://own-bridge.example', chat: 'https://chat.example/' } };
      const w1 = await s.relay.systemFile(id, 'PUT', 'public/capabilities.json', JSON.stringify(own));
      if (!e.that(w1.status >= 200 && w1.status < 300, `writing capabilities.json: ${said(w1)}`)) return;
      const set = await hostRouted(s, path, id.identity);
      e.that(
        endpoints(set.body)?.oauth_bridge === own.endpoints.oauth_bridge && endpoints(set.body)?.chat === own.endpoints.chat && set.body?.note === own.note,
        `a file setting its own oauth_bridge: ${set.said}, not the file's endpoints and fields`,
      );
      const w2 = await s.relay.systemFile(id, 'PUT', 'public/capabilities.json', JSON.stringify({ version: 1, endpoints: { chat: 'https://chat.example/' } }));
      if (!e.that(w2.status >= 200 && w2.status < 300, `rewriting capabilities.json: ${said(w2)}`)) return;
      const filled = await hostRouted(s, path, id.identity);
      e.that(
        endpoints(filled.body)?.oauth_bridge === bridge && endpoints(filled.body)?.chat === own.endpoints.chat,
        `a file without oauth_bridge: ${filled.said}, not its endpoints with ${bridge} filled in`,
      );
      const doc = await hostRouted(s, s.profile.ids.id_document_path, `${id.identity}:443`);
      e.that(doc.status === 200 && doc.body?.identity === id.identity, `id.json for Host ${id.identity}:443: ${doc.said}`);
    },
  });
}

export function notHostedCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/not-hosted',
    title:
      'for an identity that resolves but is not hosted here: GET /identities answers 404; its Host-routed id.json and capabilities.json, a rotation and an export (each validly signed by its key) are refused with a 4xx, and none of them registers it',
    rules: ['ra.identities.get', 'ra.identities.well-known', 'ra.identities.rotate', 'ra.identities.export', 'ra.errors.listed-statuses'],
    run: async (s, e) => {
      const facts = (await s.facts()).relay;
      await hostedDomain(s);
      // Published in the directory under a hosted domain, signing as itself, never registered here.
      const id = await s.identity('relay', { register: false });
      const lookup = await s.relay.get(`/identities/${id.identity}`);
      e.that(lookup.status === 404, `GET /identities/${id.identity}: ${said(lookup)}, not 404`);
      for (const path of [s.profile.ids.id_document_path, s.profile.ids.capabilities_path]) {
        const r = await s.relay.get(path, { host: id.identity });
        e.that(refused(r), `${path} for Host ${id.identity}: ${said(r)}, not refused 4xx`);
      }
      const rotated = await s.relay.post(`/identities/${id.identity}/rotate`, rotation(s.profile, id, facts.relayAddress, seed()));
      e.that(refused(rotated), `a rotation of ${id.identity}, signed by its key: ${said(rotated)}, not refused 4xx`);
      for (const who of [id, s.nobody()]) {
        const body = { identity: who.identity, ...adminEnvelope(s.profile, 'identity-export', { identity: who.identity }, who.seed) };
        const r = await s.relay.post(`/identities/${who.identity}/export`, body);
        e.that(refused(r), `an export of ${who.identity} (${who === id ? 'in the directory' : 'published nowhere'}), signed by its key: ${said(r)}, not refused 4xx`);
      }
      const after = await s.relay.get(`/identities/${id.identity}`);
      e.that(after.status === 404, `after the refused requests GET /identities/${id.identity} answers ${said(after)}, not 404`);
    },
  });
}

export function profileIdentityRecordCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/identity-record',
    lane: SYSTEM_LANE,
    title:
      'the relay-written identity record follows the encryption key: the one registered, none for a registration whose encryption_public_key is null, the new one after a rotation whose document carries one, the same one after a rotation whose document carries none',
    rules: ['ra.system.relay-written'],
    context: ['ra.identities.hosted', 'ra.identities.rotate'],
    run: async (s, e) => {
      const facts = (await s.facts()).relay;
      await hostedDomain(s);
      const invite = inviteOf(t);
      const record = async (owner: RelayIdentity): Promise<Doc | undefined> => {
        const b = safeJson(await s.relay.systemFile(owner, 'GET', 'relay-written/identity.json'));
        return isObject(b) ? b : undefined;
      };
      const encKey = (owner: RelayIdentity) => `${vocabulary.key_prefixes.encryption}${encodeBase64url(owner.encryption.publicKey)}`;
      // null stands for absent (the signed lines carry it empty).
      const plain = await s.identity('relay', { register: false });
      const lines = { identity: plain.identity, public_key: signingKey(plain), encryption_public_key: '', relay_address: facts.relayAddress };
      const body = { ...registration(s.profile, plain, facts.relayAddress, invite), encryption_public_key: null, ...adminEnvelope(s.profile, 'identity-registration', lines, plain.seed) };
      const r = await s.relay.post('/identities', body);
      if (!e.that(r.status === 201, `a registration with encryption_public_key null: ${said(r)}, not 201`)) return;
      const none = await record(plain);
      e.that(none !== undefined && none.encryption_key === undefined, `its identity record is ${JSON.stringify(none)}, not one without encryption_key`);
      // A rotation whose new document carries a new encryption key, then one whose document carries none.
      const owner = await s.identity();
      const registered = await record(owner);
      e.that(registered?.encryption_key === encKey(owner), `a registered identity's record is ${JSON.stringify(registered)}, not its encryption key ${encKey(owner)}`);
      const next = newRelayIdentity(owner.identity);
      const first = rotation(s.profile, owner, facts.relayAddress, next.seed);
      const withKey = signDocument({ ...(first.identity_document as Doc), encryption_public_key: encodeBase64url(next.encryption.publicKey) }, next.seed);
      const r1 = await s.relay.post(`/identities/${owner.identity}/rotate`, { ...first, identity_document: withKey });
      if (!e.that(r1.status >= 200 && r1.status < 300, `the rotation carrying a new encryption key: ${said(r1)}`)) return;
      const rotated = await record(next);
      e.that(rotated?.encryption_key === encKey(next), `after it the identity record is ${JSON.stringify(rotated)}, not the new encryption key ${encKey(next)}`);
      const last = newRelayIdentity(owner.identity);
      const second = rotation(s.profile, next, facts.relayAddress, last.seed);
      const { encryption_public_key: _e, ...bare } = second.identity_document as Doc;
      const r2 = await s.relay.post(`/identities/${owner.identity}/rotate`, { ...second, identity_document: signDocument(bare, last.seed) });
      if (!e.that(r2.status >= 200 && r2.status < 300, `the rotation carrying no encryption key: ${said(r2)}`)) return;
      const kept = await record(last);
      e.that(kept?.encryption_key === encKey(next), `after it the identity record is ${JSON.stringify(kept)}, not the encryption key ${encKey(next)} it had`);
    },
  });
}
