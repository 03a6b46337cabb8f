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
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Profile } from '../../../protocol/common/profile.ts';
import { defaultProfile } from '../../../protocol/common/profile.ts';
import { openCertificateAuthority, type CertificateAuthority } from './ca.ts';
import { startDnsServer, type DnsServer } from './dns.ts';
import { startAdminServer, type AdminServer } from './admin.ts';
import { Records } from './records.ts';
import { AuthorityError, type AuthorityControl, type AuthorityInfo } from './types.ts';
import { validServiceName } from '../../../protocol/common/names.ts';
import { watchAnswers } from './late.ts';

export * from './types.ts';
export { toPublicKey, toSeed } from './records.ts';
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
  /**
   * Publishes `name` (A record: `address`, where a server under test listens) and issues its
   * certificate: the server serves https on a name the harness resolves through this DNS and
   * trusts through this CA (a reference behind TLS, e.g. rp.svc-tls.test).
   */
  serverName(name: string, address: string): Promise<{ cert: string; key: string }>;
  close(): Promise<void>;
}

/** A random loopback address 127.x.y.z, avoiding 127.0.0.1 and 127.0.0.53 (and .0 / .255). */
export function randomLoopback(): string {
  for (;;) {
    const [x, y, z] = randomBytes(3);
    const addr = `127.${x}.${y}.${z}`;
    if (z === 0 || z === 255 || addr === '127.0.0.1' || addr === '127.0.0.53') continue;
    return addr;
  }
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
  const records = new Records(profile, address, otherAddress, ttl, zone);
  const { hosted, held } = records;
  const dns: DnsServer = await startDnsServer(address, options.dnsPort ?? 53, (q) => records.answerDns(q));
  const dnsPort = dns.port;

  // ---- HTTPS ----
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
      watchAnswers(records),
    );
  const https = httpsServer();
  // The same host on a second loopback address, which a URL client fetcher is never told to exempt.
  const httpsOther = httpsServer();
  let httpsPort = options.httpsPort ?? 443;
  try {
    await listen(https, httpsPort, address);
    httpsPort = (https.address() as { port: number }).port;
    records.httpsPort = httpsPort;
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

  const control: AuthorityControl = delegate(records, async (): Promise<AuthorityInfo> => ({
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
    identities: [...records.identities.keys()],
  }));

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
    serverName(name, address) {
      const host = validServiceName(name);
      if (host === undefined || isIP(address) === 0) throw new AuthorityError(`${name} at ${address}: a DNS name and an IP address`);
      records.servers.set(host, address);
      return ca.leafFor(host);
    },
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

/** The control surface: the records' methods, and `info` from the running servers. */
function delegate(records: Records, info: () => Promise<AuthorityInfo>): AuthorityControl {
  return {
    info,
    publish: (spec) => records.publish(spec),
    rotate: (identity, next, opts) => records.rotate(identity, next, opts),
    drop: (identity, what) => records.drop(identity, what),
    fault: (identity, fault) => records.fault(identity, fault),
    clearFaults: (identity) => records.clearFaults(identity),
    newIdentity: (opts) => records.newIdentity(opts),
    identity: (identity) => records.identity(identity),
    serveFile: (spec) => records.serveFile(spec),
    file: (url) => records.file(url),
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
