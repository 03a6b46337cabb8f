// The test identity authority, in the spirit of pebble's challtestsrv: on one loopback address it
// runs an authoritative DNS server (UDP and TCP), an HTTPS well-known host serving signed
// identity documents with certificates from its own CA, and an admin HTTP API (admin.ts). An
// implementation under test is pointed at it with its DNS server (`<address>:53`) and its CA file.
//
// Records, for the profile name `svc` (every identifier comes from spec/profile.yaml):
//   TXT  _svc.<id>      "svc-pubkey=ed25519:<b64url>"   (dns_txt_label, txt_pubkey_prefix)
//   TXT  _svc-enc.<id>  "svc-enckey=x25519:<b64url>"    (dns_enc_label, txt_enckey_prefix), when published
//   A    <id>           the authority's address
//   anything else under a known name: NOERROR, no answers; unknown names: NXDOMAIN.
//   HTTPS https://<id>/.well-known/svc/id.json  (id_document_path) the signed identity document
//         (ns.identity-document.format), Cache-Control: no-store unless published otherwise.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as dnsPacket from 'dns-packet';
import { vocabulary } from '../../../schemas/ts/vocabulary.ts';
import type { Profile } from '../../../protocol/common/profile.ts';
import { defaultProfile } from '../../../protocol/common/profile.ts';
import { decodeBase64Any, encodeBase64url } from '../../../protocol/common/base64.ts';
import { formatKey, parseKey } from '../../../protocol/common/keys.ts';
import { publicKeyFromSeed } from '../../../protocol/common/ed25519.ts';
import { signDocument } from '../../../protocol/common/document.ts';
import { validServiceName } from '../../../protocol/common/names.ts';
import { formatRfc3339, parseRfc3339 } from '../../../protocol/common/time.ts';
import { openCertificateAuthority, type CertificateAuthority } from './ca.ts';
import { startDnsServer, type DnsAnswer, type DnsServer } from './dns.ts';
import { startAdminServer, type AdminServer } from './admin.ts';
import { HostedFiles } from './files.ts';
import { AuthorityError, type AuthorityControl, type AuthorityInfo, type FaultSpec, type IdentityInfo, type KeyInput, type NewIdentityOptions, type PublishSpec } from './types.ts';

export * from './types.ts';
export { AuthorityClient } from './client.ts';

export interface AuthorityOptions {
  profile?: Profile;
  /** Loopback address to bind (default: a random 127.x.y.z, never 127.0.0.1 or 127.0.0.53). */
  address?: string;
  dnsPort?: number;
  httpsPort?: number;
  /** Plain HTTP port for files (default 80 when HTTPS is on 443, else any free port). */
  httpPort?: number;
  adminPort?: number;
  /** Where the CA lives (`ca.pem`, `ca-key.pem`); reused when present. Default: a temp dir removed on close. */
  dir?: string;
  /** TTL of every DNS answer, seconds (default 0: no caching). */
  ttl?: number;
  /** Zone of newIdentity() (default `id.test`). */
  zone?: string;
}

export interface Authority extends AuthorityControl {
  readonly profile: Profile;
  readonly address: string;
  /** The second loopback address (files published with otherAddress). */
  readonly otherAddress: string;
  /** `<address>:<dnsPort>`, for node:dns `setServers` or an RP's `--dns-server`. */
  readonly dnsServer: string;
  readonly dnsPort: number;
  readonly httpsPort: number;
  /** Plain HTTP port serving hosted files (never identity documents). */
  readonly httpPort: number;
  readonly caPem: string;
  /** The CA certificate on disk, for an RP's `--ca FILE`. */
  readonly caFile: string;
  readonly adminUrl: string;
  close(): Promise<void>;
}

interface Published {
  identity: string;
  seed?: Uint8Array;
  publicKey: Uint8Array;
  encryptionPublicKey?: Uint8Array;
  previousKeys: { publicKey: Uint8Array; validUntil: string }[];
  dns: boolean;
  https: boolean;
  relay: string;
  cacheControl: string;
  profile?: Record<string, unknown>;
  updatedAt: string;
  faults: FaultSpec & { dnsKeyBytes?: Uint8Array };
}

const OVERSIZE_DEFAULT = 262_144;

/** A random loopback address 127.x.y.z, avoiding 127.0.0.1 and 127.0.0.53 (and .0 / .255). */
export function randomLoopback(): string {
  for (;;) {
    const [x, y, z] = randomBytes(3);
    const addr = `127.${x}.${y}.${z}`;
    if (z === 0 || z === 255 || addr === '127.0.0.1' || addr === '127.0.0.53') continue;
    return addr;
  }
}

export function toSeed(input: KeyInput, what = 'seed'): Uint8Array {
  const bytes = typeof input === 'string' ? decodeBase64Any(input.trim()) : input;
  if (bytes?.length !== 32) throw new AuthorityError(`${what} must be 32 bytes (base64url)`);
  return bytes;
}

export function toPublicKey(input: KeyInput, kind: 'signing' | 'encryption' = 'signing'): Uint8Array {
  const bytes = typeof input === 'string' ? parseKey(input, kind) : input;
  if (bytes?.length !== 32) throw new AuthorityError(`${kind === 'signing' ? 'public key' : 'encryption key'} must be 32 bytes (${kind === 'signing' ? 'ed25519' : 'x25519'}:<b64url>)`);
  return bytes;
}

/** A string with the `ed25519:` prefix is a public key; any other string, and bytes, a seed. */
function seedOrKey(input: KeyInput): { seed?: Uint8Array; publicKey: Uint8Array } {
  if (typeof input === 'string' && input.trim().startsWith(vocabulary.key_prefixes.signing)) return { publicKey: toPublicKey(input) };
  const seed = toSeed(input);
  return { seed, publicKey: publicKeyFromSeed(seed) };
}

export async function startAuthority(options: AuthorityOptions = {}): Promise<Authority> {
  const profile = options.profile ?? defaultProfile;
  const address = options.address ?? randomLoopback();
  let otherAddress = randomLoopback();
  while (otherAddress === address) otherAddress = randomLoopback();
  const ttl = options.ttl ?? 0;
  const zone = (options.zone ?? 'id.test').toLowerCase();
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'svc-authority-')));
  const ca: CertificateAuthority = await openCertificateAuthority(dir);
  const identities = new Map<string, Published>();
  const hosted = new HostedFiles((host) => identities.has(host));
  const ids = profile.ids;
  const txtLabel = `${ids.dns_txt_label}.`;
  const encLabel = `${ids.dns_enc_label}.`;

  // ---- DNS ----
  const answerDns = (q: dnsPacket.Question): DnsAnswer => {
    const name = q.name.toLowerCase().replace(/\.$/, '');
    let kind: 'a' | 'txt' | 'enc';
    let id: string;
    if (name.startsWith(txtLabel)) [kind, id] = ['txt', name.slice(txtLabel.length)];
    else if (name.startsWith(encLabel)) [kind, id] = ['enc', name.slice(encLabel.length)];
    else [kind, id] = ['a', name];
    const p = identities.get(id);
    const fileHost = kind === 'a' ? hosted.onOther(id) : undefined;
    if (!p && fileHost !== undefined) return { rcode: 'NOERROR', answers: q.type === 'A' ? [{ type: 'A', name: q.name, ttl, class: 'IN', data: fileHost ? otherAddress : address }] : [] };
    if (!p) return { rcode: 'NXDOMAIN', answers: [] };
    const f = p.faults;
    const base: Partial<DnsAnswer> = {};
    if (f.timeout === 'dns' || f.timeout === 'both') return { rcode: 'NOERROR', answers: [], silent: true };
    if (f.delayMs?.dns) base.delayMs = f.delayMs.dns;
    const out = (answers: dnsPacket.Answer[]): DnsAnswer => ({ ...base, rcode: 'NOERROR', answers });
    if (kind === 'a') return out(q.type === 'A' ? [{ type: 'A', name: q.name, ttl, class: 'IN', data: address }] : []);
    if (!p.dns) return { ...base, rcode: 'NXDOMAIN', answers: [] };
    if (kind === 'txt') {
      const key = f.dnsKeyBytes ?? p.publicKey;
      return out(q.type === 'TXT' ? [{ type: 'TXT', name: q.name, ttl, class: 'IN', data: [`${ids.txt_pubkey_prefix}${encodeBase64url(key)}`] }] : []);
    }
    if (!p.encryptionPublicKey) return { ...base, rcode: 'NXDOMAIN', answers: [] };
    return out(q.type === 'TXT' ? [{ type: 'TXT', name: q.name, ttl, class: 'IN', data: [`${ids.txt_enckey_prefix}${encodeBase64url(p.encryptionPublicKey)}`] }] : []);
  };
  const dns: DnsServer = await startDnsServer(address, options.dnsPort ?? 53, answerDns);
  const dnsPort = dns.port;

  // ---- HTTPS ----
  const documentOf = (p: Published): Record<string, unknown> | undefined => {
    if (!p.seed) return undefined;
    const fields: Record<string, unknown> = {
      version: 1,
      identity: p.identity,
      public_key: formatKey(p.publicKey, 'signing'),
      relay: p.relay,
      updated_at: p.updatedAt,
    };
    if (p.encryptionPublicKey) fields.encryption_public_key = formatKey(p.encryptionPublicKey, 'encryption');
    if (p.previousKeys.length > 0) fields.previous_keys = p.previousKeys.map((k) => ({ public_key: formatKey(k.publicKey, 'signing'), valid_until: k.validUntil }));
    const doc: Record<string, unknown> = signDocument(fields, p.seed);
    if (p.faults.badSignature) {
      const sig = Buffer.from(doc.signature as string, 'base64url');
      sig[0] = sig[0]! ^ 0x01;
      doc.signature = encodeBase64url(sig);
    }
    return doc;
  };

  const held = new Set<ServerResponse>();
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...headers });
    res.end(text);
  };
  const serveDocument = (req: IncomingMessage, res: ServerResponse): void => {
    const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    const path = (req.url ?? '/').split('?')[0];
    const p = identities.get(host);
    if ((req.method === 'GET' || req.method === 'HEAD') && !p && hosted.handle(req, res, host, path ?? '/')) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      json(res, 405, { error: 'method_not_allowed', detail: 'GET only' });
      return;
    }
    if (p && path === ids.profile_document_path && p.profile && p.https) return json(res, 200, p.profile);
    if (path !== ids.id_document_path || !p) {
      json(res, 404, { error: 'not_found', detail: `no identity document at https://${host}${path}` });
      return;
    }
    const f = p.faults;
    if (f.timeout === 'https' || f.timeout === 'both') {
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    const send = () => {
      if (!p.https) return json(res, 404, { error: 'not_found', detail: `${p.identity} publishes no identity document` });
      if (f.httpsStatus) return json(res, f.httpsStatus, { error: 'fault', detail: `injected status ${f.httpsStatus}` });
      if (f.redirect) {
        const location = f.redirect === true ? `https://${address}${httpsPort === 443 ? '' : `:${httpsPort}`}${ids.id_document_path}` : f.redirect;
        res.writeHead(302, { location, 'cache-control': 'no-store', 'content-length': 0 });
        return res.end();
      }
      const doc = documentOf(p);
      if (!doc) return json(res, 404, { error: 'not_found', detail: `no seed known for ${p.identity}: publish with a seed to serve its document` });
      if (f.oversize) {
        const size = f.oversize === true ? OVERSIZE_DEFAULT : f.oversize;
        doc.padding = 'x'.repeat(Math.max(0, size - JSON.stringify(doc).length - 14));
      }
      return json(res, 200, doc, { 'cache-control': p.cacheControl });
    };
    const delay = f.delayMs?.https;
    if (delay && delay > 0) {
      held.add(res);
      const t = setTimeout(() => {
        held.delete(res);
        if (!res.destroyed) send();
      }, delay);
      res.on('close', () => {
        clearTimeout(t);
        held.delete(res);
      });
    } else send();
  };
  const defaultLeaf = await ca.leafFor(address);
  const httpsServer = (): HttpsServer =>
    createHttpsServer(
      {
        ...defaultLeaf,
        SNICallback: (servername, cb) => {
          ca.contextFor(servername).then(
            (ctx) => cb(null, ctx),
            (error: Error) => cb(error),
          );
        },
      },
      serveDocument,
    );
  const https = httpsServer();
  // The same host on a second loopback address, which a URL client fetcher is never told to exempt.
  const httpsOther = httpsServer();
  let httpsPort = options.httpsPort ?? 443;
  try {
    await listen(https, httpsPort, address);
    httpsPort = (https.address() as { port: number }).port;
    await listen(httpsOther, httpsPort, otherAddress);
  } catch (error) {
    await dns.close();
    await closeServer(https).catch(() => undefined);
    throw error;
  }
  // Plain HTTP serves files only, so a suite can see whether a fetcher refuses `http` URLs.
  const http = createHttpServer((req, res) => {
    const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if ((req.method === 'GET' || req.method === 'HEAD') && hosted.handle(req, res, host, path, false)) return;
    const text = JSON.stringify({ error: 'not_found', detail: `no file at http://${host}${path}` });
    res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  let httpPort = options.httpPort ?? (httpsPort === 443 ? 80 : 0);
  try {
    await listen(http, httpPort, address);
  } catch (error) {
    await dns.close();
    await Promise.all([closeServer(https), closeServer(httpsOther)]);
    throw error;
  }
  httpPort = (http.address() as { port: number }).port;
  hosted.httpsPort = httpsPort;
  hosted.httpPort = httpPort;

  // ---- state changes ----
  const stamp = () => formatRfc3339(Date.now());
  const need = (identity: string): Published => {
    const id = validServiceName(identity);
    const p = id === undefined ? undefined : identities.get(id);
    if (!p) throw new AuthorityError(`unknown identity ${identity}`, 404);
    return p;
  };
  const infoOf = (p: Published): IdentityInfo => {
    const faults: Record<string, unknown> = { ...p.faults };
    delete faults.dnsKeyBytes;
    if (p.faults.dnsKeyBytes) faults.dnsKey = formatKey(p.faults.dnsKeyBytes);
    const info: IdentityInfo = {
      identity: p.identity,
      public_key: formatKey(p.publicKey),
      previous_keys: p.previousKeys.map((k) => ({ public_key: formatKey(k.publicKey), valid_until: k.validUntil })),
      dns: p.dns,
      https: p.https,
      faults,
    };
    if (p.encryptionPublicKey) info.encryption_public_key = formatKey(p.encryptionPublicKey, 'encryption');
    const doc = p.https ? documentOf({ ...p, faults: {} }) : undefined;
    if (doc) info.document = doc;
    return info;
  };

  const control: AuthorityControl = {
    async info(): Promise<AuthorityInfo> {
      return {
        name: profile.name,
        address,
        otherAddress,
        dnsServer: `${address}:${dnsPort}`,
        httpsPort,
        httpPort,
        adminUrl: admin.url,
        caFile: ca.caFile,
        caPem: ca.caPem,
        ttl,
        zone,
        identities: [...identities.keys()],
      };
    },
    async publish(spec: PublishSpec): Promise<IdentityInfo> {
      const identity = validServiceName(spec.identity);
      if (identity === undefined) throw new AuthorityError(`${JSON.stringify(spec.identity)} is not a valid service name`);
      let seed: Uint8Array | undefined;
      let publicKey: Uint8Array;
      if (spec.seed !== undefined) {
        seed = toSeed(spec.seed);
        publicKey = publicKeyFromSeed(seed);
        if (spec.publicKey !== undefined && !Buffer.from(toPublicKey(spec.publicKey)).equals(publicKey)) throw new AuthorityError('publicKey does not belong to seed');
      } else if (spec.publicKey !== undefined) publicKey = toPublicKey(spec.publicKey);
      else throw new AuthorityError('publish needs a seed or a publicKey');
      const https = spec.https ?? seed !== undefined;
      if (https && !seed) throw new AuthorityError('serving the identity document over HTTPS needs the seed (the document is signed by the current key)');
      const previousKeys = (spec.previousKeys ?? []).map((k) => {
        if (parseRfc3339(k.validUntil) === undefined) throw new AuthorityError('previousKeys[].validUntil must be RFC 3339');
        return { publicKey: toPublicKey(k.publicKey), validUntil: k.validUntil };
      });
      const p: Published = {
        identity,
        publicKey,
        previousKeys,
        dns: spec.dns ?? true,
        https,
        relay: spec.relay ?? identity,
        cacheControl: spec.cacheControl ?? 'no-store',
        updatedAt: stamp(),
        faults: identities.get(identity)?.faults ?? {},
      };
      if (seed) p.seed = seed;
      if (spec.profile !== undefined) p.profile = spec.profile;
      if (spec.encryptionPublicKey !== undefined) p.encryptionPublicKey = toPublicKey(spec.encryptionPublicKey, 'encryption');
      identities.set(identity, p);
      return infoOf(p);
    },
    async rotate(identity, newSeedOrKey, opts = {}): Promise<IdentityInfo> {
      const p = need(identity);
      const next = seedOrKey(newSeedOrKey);
      if (p.https && !next.seed) throw new AuthorityError('rotating a key served over HTTPS needs the new seed (the document is signed by the current key)');
      if (opts.validUntil !== undefined && parseRfc3339(opts.validUntil) === undefined) throw new AuthorityError('validUntil must be RFC 3339');
      const validUntil = opts.validUntil ?? formatRfc3339(Date.now() + (opts.graceSeconds ?? 0) * 1000);
      p.previousKeys = [{ publicKey: p.publicKey, validUntil }, ...p.previousKeys.filter((k) => !Buffer.from(k.publicKey).equals(next.publicKey))];
      p.publicKey = next.publicKey;
      if (next.seed) p.seed = next.seed;
      else delete p.seed;
      p.updatedAt = stamp();
      return infoOf(p);
    },
    async drop(identity, what): Promise<IdentityInfo> {
      const p = need(identity);
      if (what !== 'dns' && what !== 'https' && what !== 'both') throw new AuthorityError('drop takes dns, https or both');
      if (what !== 'https') p.dns = false;
      if (what !== 'dns') p.https = false;
      p.updatedAt = stamp();
      return infoOf(p);
    },
    async fault(identity, fault): Promise<IdentityInfo> {
      const p = need(identity);
      const next: Published['faults'] = { ...p.faults, ...fault };
      if (fault.dnsKey !== undefined) {
        next.dnsKeyBytes = fault.dnsKey === true ? publicKeyFromSeed(new Uint8Array(randomBytes(32))) : toPublicKey(fault.dnsKey);
        delete next.dnsKey;
      }
      if (fault.timeout !== undefined && !['dns', 'https', 'both'].includes(fault.timeout)) throw new AuthorityError('timeout takes dns, https or both');
      if (fault.httpsStatus !== undefined && (!Number.isInteger(fault.httpsStatus) || fault.httpsStatus < 100 || fault.httpsStatus > 599))
        throw new AuthorityError('httpsStatus must be an HTTP status');
      p.faults = next;
      return infoOf(p);
    },
    async clearFaults(identity): Promise<IdentityInfo> {
      const p = need(identity);
      p.faults = {};
      for (const res of held) res.destroy();
      return infoOf(p);
    },
    async newIdentity(opts: NewIdentityOptions = {}) {
      const label = opts.label ?? `t${randomBytes(6).toString('hex')}`;
      const identity = `${label}.${opts.zone ?? zone}`;
      const seed = new Uint8Array(randomBytes(32));
      const spec: PublishSpec = { identity, seed };
      if (opts.encryption) spec.encryptionPublicKey = new Uint8Array(randomBytes(32));
      if (opts.dns !== undefined) spec.dns = opts.dns;
      if (opts.https !== undefined) spec.https = opts.https;
      if (opts.profile !== undefined) spec.profile = opts.profile;
      const info = await control.publish(spec);
      return { identity: info.identity, seed, publicKey: info.public_key };
    },
    async identity(identity) {
      const id = validServiceName(identity);
      const p = id === undefined ? undefined : identities.get(id);
      return p ? infoOf(p) : undefined;
    },
    async serveFile(spec) {
      return hosted.serve(spec);
    },
    async file(url) {
      return hosted.file(url);
    },
  };

  let admin: AdminServer;
  try {
    admin = await startAdminServer(address, options.adminPort ?? 8055, control, () => ca.caPem);
  } catch (error) {
    await dns.close();
    await Promise.all([closeServer(https), closeServer(httpsOther), closeServer(http)]);
    throw error;
  }

  let closed = false;
  return {
    ...control,
    profile,
    address,
    otherAddress,
    dnsServer: `${address}:${dnsPort}`,
    dnsPort,
    httpsPort,
    httpPort,
    caPem: ca.caPem,
    caFile: ca.caFile,
    adminUrl: admin.url,
    async close() {
      if (closed) return;
      closed = true;
      for (const res of held) res.destroy();
      hosted.close();
      await Promise.all([dns.close(), closeServer(https), closeServer(httpsOther), closeServer(http), admin.close()]);
      if (ownDir) await rm(dir, { recursive: true, force: true });
    },
  };
}

function listen(
  server: { listen: (port: number, host: string, cb: () => void) => unknown; once: (e: 'error', cb: (err: Error) => void) => unknown; off: (e: 'error', cb: (err: Error) => void) => unknown },
  port: number,
  host: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export function closeServer(server: HttpsServer | import('node:http').Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

export { listen as listenOn };
