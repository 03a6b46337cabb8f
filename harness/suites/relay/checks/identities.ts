// The public read surface and identities: banner, health, registration (hosted), lookup, the
// Host-routed well-known documents, availability, rotation and export.
import type { Check } from '../../../run/model.ts';
import type { paths } from '../../../../schemas/ts/http/relay.ts';
import { adminEnvelope, archive, b64, newRelayIdentity, registration, rotation, signingKey } from '../../../actors/relay/index.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import { sign, publicKey } from '../../../impl/noble.ts';
import { relayCheck } from '../check.ts';
import { CheckSkip, hostedDomain, isObject, safeJson, said, inviteOf, type RelayTarget } from '../driver.ts';
import { learnSystemPath } from '../../../actors/relay/owner.ts';

type Reason = paths['/hosted/availability']['get']['responses'][200]['content']['application/json']['reason'];
// Document 3's list, in spec/http/relay.openapi.yaml: a reason added there and not here fails the type check.
const REASON_SET = { available: 1, taken: 1, reserved: 1, blocked: 1, too_short: 1, too_long: 1, charset: 1, hyphen: 1, punycode: 1, domain_not_hosted: 1 } satisfies Record<Reason, 1>;
const REASONS: readonly string[] = Object.keys(REASON_SET);

function serviceBannerCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/service/banner',
    title: 'GET / with Accept: application/json answers the banner with its fields',
    rules: ['ra.banner'],
    run: async (s, e) => {
      const r = await s.relay.banner();
      const b = safeJson(r);
      if (r.status !== 200 || !isObject(b)) return e.fail(`GET / as JSON: ${said(r)}`);
      for (const f of ['service', 'relay_address', 'version']) e.that(typeof b[f] === 'string', `the banner has no ${f} string`);
      for (const f of ['launcher_hosts', 'hosted_domains']) e.that(Array.isArray(b[f]), `the banner has no ${f} array`);
      e.that(typeof b.version === 'string' && /^\d+\.\d+\.\d+/.test(b.version), `version ${String(b.version)} is not semver`);
      for (const f of ['launcher_host', 'web_ui', 'buildTime', 'versionHash']) e.that(f in b, `the banner lacks ${f}`);
    },
  });
}

function serviceHealthCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/service/health',
    title: 'GET /health answers 200 with status ok or degraded, version, buildTime and versionHash',
    rules: ['ra.health'],
    run: async (s, e) => {
      const r = await s.relay.get('/health');
      const b = safeJson(r);
      if (r.status !== 200 || !isObject(b)) return e.fail(`GET /health: ${said(r)}`);
      e.that(b.status === 'ok' || b.status === 'degraded', `status ${String(b.status)}`);
      for (const f of ['version', 'buildTime', 'versionHash']) e.that(f in b, `health lacks ${f}`);
      if ('storage' in b) e.that(isObject(b.storage) && typeof b.storage.writable === 'boolean', 'storage has no writable boolean');
    },
  });
}

function identitiesRegisterCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/register',
    title: 'a hosted registration with a signed document answers 201 with identity, public_key, encryption_public_key, relay and created_at; the relay then serves it',
    rules: ['ra.identities.hosted', 'ra.identities.get', 'ra.signing.identity-registration'],
    run: async (s, e) => {
      const id = await s.identity('relay', { register: false });
      if (!id.identity.endsWith(await hostedDomain(s))) throw new CheckSkip('no hosted domain');
      const facts = (await s.facts()).relay;
      const r = await s.relay.register(id, facts.relayAddress, inviteOf(t));
      const b = safeJson(r);
      e.that(r.status === 201, `POST /identities: ${said(r)}, not 201`);
      for (const f of ['identity', 'public_key', 'relay', 'created_at']) e.that(isObject(b) && typeof b[f] === 'string', `the 201 body lacks ${f}`);
      e.that(isObject(b) && 'encryption_public_key' in b, 'the 201 body lacks encryption_public_key');
      const g = await s.relay.get(`/identities/${id.identity}`);
      const gb = safeJson(g);
      e.that(
        g.status === 200 && isObject(gb) && gb.identity === id.identity && typeof gb.public_key === 'string' && gb.public_key.replace(/=+$/, '') === signingKey(id),
        `GET /identities/${id.identity}: ${said(g)}`,
      );
      const n = await s.relay.get(`/identities/nobody-${Date.now()}.${await hostedDomain(s)}`);
      e.that(n.status === 404, `an identity never registered: ${said(n)}, not 404`);
    },
  });
}

function identitiesWellKnownCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/well-known',
    title: 'GET /.well-known/svc/id.json with Host set to a hosted identity serves its stored document',
    rules: ['ra.identities.well-known'],
    run: async (s, e) => {
      const id = await s.identity();
      await hostedDomain(s);
      const r = await s.relay.get(s.profile.ids.id_document_path, { host: id.identity });
      const b = safeJson(r);
      e.that(r.status === 200 && isObject(b) && b.identity === id.identity && typeof b.signature === 'string', `the document for Host ${id.identity}: ${said(r)}`);
      const c = await s.relay.get(s.profile.ids.capabilities_path, { host: id.identity });
      const cb = safeJson(c);
      e.that(c.status === 200 && isObject(cb), `capabilities.json for Host ${id.identity}: ${said(c)}`);
      if (t.declared.oauthBridgeUrl) {
        e.that(isObject(cb) && isObject(cb.endpoints) && typeof cb.endpoints.oauth_bridge === 'string', `capabilities.json lacks endpoints.oauth_bridge though OAUTH_BRIDGE_URL is set: ${said(c)}`);
      }
    },
  });
}

function identitiesIndieauthLinkCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/indieauth-link',
    title: "with OAUTH_BRIDGE_URL set, GET / on a hosted identity's host carries a Link with rel indieauth-metadata",
    rules: ['ra.identities.indieauth-link'],
    run: async (s, e) => {
      if (!t.declared.oauthBridgeUrl) throw new CheckSkip('the target declares no OAUTH_BRIDGE_URL (--relay-oauth-bridge-url)');
      const id = await s.identity();
      const r = await s.relay.get('/', { host: id.identity });
      const link = r.headers.link ?? '';
      e.that(/rel="?indieauth-metadata"?/.test(link) && link.includes(new URL(t.declared.oauthBridgeUrl).host), `Link: ${link || '(none)'}`);
    },
  });
}

function identitiesRegisterRefusalsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/register-refusals',
    title: 'registration: a second one 409; a bad signature 401; no admin envelope 400; under the invite gate no invite refused, at a relay declared open none needed',
    rules: ['ra.identities.conflict', 'ra.identities.signature', 'ra.identities.invite'],
    cells: [{ rule: 'ra.identities.conflict', facet: 'once', value: 'replay', operation: 'register' }],
    run: async (s, e) => {
      const facts = (await s.facts()).relay;
      const domain = await hostedDomain(s);
      const id = await s.identity();
      const invite = inviteOf(t);
      const again = await s.relay.register(id, facts.relayAddress, invite);
      e.that(again.status === 409, `the same identity again: ${said(again)}, not 409`);
      const other = newRelayIdentity(`t${Date.now().toString(36)}x.${domain}`);
      const body = registration(s.profile, other, facts.relayAddress, invite);
      const bad = await s.relay.post('/identities', { ...body, identity_signature: b64(sign(id.seed, 'something else')) });
      e.that(bad.status === 401, `a bad identity_signature: ${said(bad)}, not 401`);
      const { issued_at: _i, nonce: _n, identity_signature: _s, ...bare } = body;
      const none = await s.relay.post('/identities', bare);
      e.that(none.status === 400, `no admin envelope: ${said(none)}, not 400`);
      if (t.declared.inviteCode) {
        const third = newRelayIdentity(`t${Date.now().toString(36)}y.${domain}`);
        const r = await s.relay.register(third, facts.relayAddress);
        e.that(r.status >= 400 && r.status < 500, `no invite_code under the invite gate: ${said(r)}, not refused`);
        const r2 = await s.relay.register(third, facts.relayAddress, { invite_code: 'not-an-invite' });
        e.that(r2.status >= 400 && r2.status < 500, `a wrong invite_code: ${said(r2)}, not refused`);
      }
      // The other side of the gate: a relay declared open registers without invite_code.
      const peer = (await s.facts()).peer;
      if (t.declared.peerOpenRegistration && peer) {
        const open = await s.identity('peer', { register: false });
        const r = await s.peer.register(open, peer.relayAddress);
        e.that(r.status === 201, `a registration without invite_code at the open peer ${t.peerUrl ?? ''}: ${said(r)}, not 201`);
      }
    },
  });
}

function identitiesAvailabilityCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/availability',
    title: 'GET /hosted/availability always answers 200 with its fields and a reason of the list (taken for a registered name), 400 without handle, CORS for any origin',
    rules: ['ra.availability', 'ra.availability.reasons'],
    run: async (s, e) => {
      const domain = await hostedDomain(s);
      const id = await s.identity();
      const label = id.identity.slice(0, -domain.length - 1);
      const cases: Array<[string, string | undefined]> = [
        [label, 'taken'],
        [`free${Date.now().toString(36)}`, 'available'],
        ['bad_name', 'charset'],
        ['-dash', 'hyphen'],
        ['xn--abc', 'punycode'],
      ];
      for (const [handle, want] of cases) {
        const r = await s.relay.get(`/hosted/availability?handle=${encodeURIComponent(handle)}&domain=${domain}`, { origin: 'https://elsewhere.example' });
        const b = safeJson(r);
        if (r.status !== 200 || !isObject(b)) {
          e.fail(`handle ${handle}: ${said(r)}, not 200`);
          continue;
        }
        for (const f of ['handle', 'identity', 'reason', 'message']) e.that(typeof b[f] === 'string', `handle ${handle}: no ${f}`);
        e.that(typeof b.available === 'boolean', `handle ${handle}: no available boolean`);
        e.that(
          isObject(b.policy) && typeof b.policy.min_len === 'number' && typeof b.policy.max_len === 'number' && typeof b.policy.charset === 'string',
          `handle ${handle}: no policy {min_len, max_len, charset}`,
        );
        e.that(REASONS.includes(String(b.reason)), `handle ${handle}: reason ${String(b.reason)} is not in the document's list`);
        if (want) e.that(b.reason === want && b.available === (want === 'available'), `handle ${handle}: reason ${String(b.reason)} (available ${String(b.available)}), expected ${want}`);
        e.that(r.headers['access-control-allow-origin'] === '*' || r.headers['access-control-allow-origin'] === 'https://elsewhere.example', `handle ${handle}: no CORS header for any origin`);
      }
      // Handles that are no DNS label, or more than the leftmost one: whatever a relay makes of them,
      // the answer is 200 with a reason of the list, and available only with reason available.
      for (const handle of ['abcdef.', 'abc..def', 'ab cd', 'übername', 'a'.repeat(70), '.', '%']) {
        const r = await s.relay.get(`/hosted/availability?handle=${encodeURIComponent(handle)}&domain=${domain}`);
        const b = safeJson(r);
        e.that(
          r.status === 200 && isObject(b) && REASONS.includes(String(b.reason)) && b.available === (b.reason === 'available'),
          `handle ${JSON.stringify(handle)}: ${said(r)}, not 200 with a reason of the document's list`,
        );
      }
      const other = await s.relay.get(`/hosted/availability?handle=freename&domain=not-hosted.example`);
      const ob = safeJson(other);
      e.that(other.status === 200 && isObject(ob) && ob.reason === 'domain_not_hosted', `a domain not hosted: ${said(other)}`);
      const none = await s.relay.get('/hosted/availability');
      e.that(none.status === 400, `without handle: ${said(none)}, not 400`);
    },
  });
}

/** A handle of `n` letters that no one registered: random, so no reserved or blocked word by design. */
const letters = (n: number): string => Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');

function identitiesAvailabilityPolicyCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/availability-policy',
    title:
      "availability judged by the relay's own published policy: a handle one shorter than min_len is too_short, one of min_len and one of max_len available, one longer than max_len too_long, one of two labels unavailable; without domain the first hosted domain is asked; identity is the handle under the domain, available true exactly when reason is available",
    rules: ['ra.availability', 'ra.availability.reasons'],
    run: async (s, e) => {
      const domain = await hostedDomain(s);
      const ask = async (query: string) => {
        const r = await s.relay.get(`/hosted/availability?${query}`);
        const b = safeJson(r);
        return { r, b: isObject(b) ? b : undefined };
      };
      const first = await ask(`handle=${letters(12)}&domain=${domain}`);
      const policy = first.b?.policy;
      if (!isObject(policy) || typeof policy.min_len !== 'number' || typeof policy.max_len !== 'number') return e.fail(`the answer names no policy to judge by: ${said(first.r)}`);
      const { min_len: min, max_len: max } = policy as { min_len: number; max_len: number };
      // A name no one could pick for another reason may still be on a relay's reserved or blocked list.
      const listed = (reason: unknown) => reason === 'reserved' || reason === 'blocked';
      const cases: Array<[number, string]> = [
        [min - 1, 'too_short'],
        [min, 'available'],
        [max, 'available'],
        [max + 1, 'too_long'],
      ];
      for (const [n, want] of cases) {
        if (n < 1) continue;
        let answer = await ask(`handle=${letters(n)}&domain=${domain}`);
        for (let i = 0; i < 3 && listed(answer.b?.reason); i++) answer = await ask(`handle=${letters(n)}&domain=${domain}`);
        const { r, b } = answer;
        e.that(r.status === 200 && b?.reason === want && b.available === (want === 'available'), `a handle of ${n} letters (policy ${min} to ${max}): ${said(r)}, not ${want}`);
      }
      // The default domain, where the banner leaves no doubt which is first: a registered name asked without domain is taken there.
      const id = await s.identity();
      const label = id.identity.slice(0, -domain.length - 1);
      if ((await s.facts()).relay.hostedDomains.length === 1) {
        const bare = await ask(`handle=${label}`);
        e.that(
          bare.r.status === 200 && bare.b?.reason === 'taken' && bare.b.available === false && bare.b.identity === id.identity && bare.b.handle === label,
          `handle ${label} without domain (the one hosted domain is ${domain}): ${said(bare.r)}, not taken as ${id.identity}`,
        );
      } else s.note('the relay hosts several domains: which is first (the default) is not published, so the default is not judged');
      const free = letters(12);
      const open = await ask(`handle=${free}&domain=${domain}`);
      e.that(open.b?.identity === `${free}.${domain}` && open.b.handle === free, `handle ${free} under ${domain}: ${said(open.r)}, not the identity ${free}.${domain}`);
      // "handle (required, leftmost label only)": two labels that would each be free are not a handle.
      const dotted = `${letters(Math.max(min, 8))}.${letters(Math.max(min, 8))}`;
      const two = await ask(`handle=${dotted}&domain=${domain}`);
      e.that(two.r.status === 200 && two.b?.available === false && two.b.reason !== 'available', `handle ${dotted} (two labels) under ${domain}: ${said(two.r)}, not unavailable`);
    },
  });
}

function identitiesRotateCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/rotate',
    title: 'a rotation signed by the old key with a new document signed by the new key (previous_keys listing the old one) is accepted; the relay then serves the new key',
    rules: ['ra.identities.rotate'],
    context: ['ra.signing.identity-rotation'],
    run: async (s, e) => {
      const id = await s.identity();
      await hostedDomain(s);
      const facts = (await s.facts()).relay;
      const newSeed = new Uint8Array(32).map(() => Math.floor(Math.random() * 256));
      const newKey = encodeBase64url(publicKey(newSeed));
      const body = rotation(s.profile, id, facts.relayAddress, newSeed);
      const bad = await s.relay.post(`/identities/${id.identity}/rotate`, { ...body, rotation_signature: b64(sign(newSeed, 'x')), nonce: `${String(body.nonce)}x` });
      e.that(bad.status === 401 || bad.status === 400, `a rotation not signed by the old key: ${said(bad)}, not refused`);
      const r = await s.relay.post(`/identities/${id.identity}/rotate`, body);
      e.that(r.status >= 200 && r.status < 300, `the rotation: ${said(r)}`);
      const g = safeJson(await s.relay.get(`/identities/${id.identity}`));
      e.that(isObject(g) && String(g.public_key).replace(/=+$/, '') === newKey, `GET /identities after rotation still gives ${isObject(g) ? String(g.public_key) : '?'}`);
    },
  });
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

function identitiesExportCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/identities/export',
    title:
      'an export with a valid identity-export envelope answers application/gzip: a tar archive holding the identity document, under .svc/public/id.json too, and the system files the owner wrote, public and relay',
    rules: ['ra.identities.export', 'ra.signing.identity-export'],
    run: async (s, e) => {
      const id = await s.identity();
      await hostedDomain(s);
      // A system file of the owner's, which the archive must carry as written.
      const written = { version: 1, endpoints: { chat: `https://chat.example/${id.identity}` } };
      const put = await s.relay.systemFile(id, 'PUT', 'public/capabilities.json', JSON.stringify(written));
      // And one of `.svc/relay` ("its .svc system files", not only the public ones).
      const contacts = { version: 1, contacts: [{ identity: (await s.identity()).identity, state: 'accepted' }] };
      const { answer: relayPut } = await learnSystemPath(s.relay, id, 'relay/contacts.json', JSON.stringify(contacts));
      const body = { identity: id.identity, ...adminEnvelope(s.profile, 'identity-export', { identity: id.identity }, id.seed) };
      const r = await s.relay.post(`/identities/${id.identity}/export`, body);
      e.that(r.status === 200 && /gzip/.test(r.headers['content-type'] ?? ''), `the export: ${r.status} ${r.headers['content-type'] ?? ''}`);
      if (r.status !== 200) return;
      const files = await archive(r.body).catch((error: Error) => void e.fail(`the export is not a gzip tar archive: ${error.message}`));
      if (!files) return;
      const entries = [...files.keys()];
      const docFound = entries.some((path) => {
        if (!path.endsWith('id.json')) return false;
        const doc = parsed(files.get(path)!);
        return isObject(doc) && doc.identity === id.identity;
      });
      e.that(docFound, `no id.json with the identity document in the archive (entries: ${entries.join(', ') || 'none'})`);
      const dir = s.profile.ids.system_dir;
      const publicDoc = parsed(files.get(`${dir}/public/id.json`) ?? '');
      e.that(isObject(publicDoc) && publicDoc.identity === id.identity, `no ${dir}/public/id.json with the identity document in the archive (entries: ${entries.join(', ')})`);
      if (put.status >= 200 && put.status < 300) {
        const caps = parsed(files.get(`${dir}/public/capabilities.json`) ?? '');
        e.that(
          isObject(caps) && caps.version === 1 && isObject(caps.endpoints) && caps.endpoints.chat === written.endpoints.chat,
          `the archive's ${dir}/public/capabilities.json is ${JSON.stringify(caps) ?? 'missing'}, not the file the owner wrote (entries: ${entries.join(', ')})`,
        );
      } else s.note(`writing public/capabilities.json answered ${said(put)}: the system files in the archive are not judged`);
      if (relayPut.status >= 200 && relayPut.status < 300) {
        const held = entries.filter((path) => path.endsWith('relay/contacts.json')).map((path) => parsed(files.get(path)!));
        e.that(
          held.some((doc) => JSON.stringify(doc) === JSON.stringify(contacts)),
          `the archive holds no relay/contacts.json as the owner wrote it (${JSON.stringify(held)}; entries: ${entries.join(', ')})`,
        );
      } else s.note(`writing relay/contacts.json answered ${said(relayPut)}: the archive's .svc/relay documents are not judged`);
      const forged = await s.relay.post(`/identities/${id.identity}/export`, { ...body, identity_signature: b64(sign(id.seed, 'x')) });
      e.that(forged.status === 401, `an export with a bad signature: ${said(forged)}, not 401`);
    },
  });
}

export function identityChecks(t: RelayTarget): Check[] {
  return [
    serviceBannerCheck(t),
    serviceHealthCheck(t),
    identitiesRegisterCheck(t),
    identitiesWellKnownCheck(t),
    identitiesIndieauthLinkCheck(t),
    identitiesRegisterRefusalsCheck(t),
    identitiesAvailabilityCheck(t),
    identitiesAvailabilityPolicyCheck(t),
    identitiesRotateCheck(t),
    identitiesExportCheck(t),
  ];
}
