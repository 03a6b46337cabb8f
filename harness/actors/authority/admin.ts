// The authority's admin HTTP API (plain HTTP on the authority's address, JSON in and out), so
// another process (the CLI, a suite against a running authority) drives it like the in-process
// object. Keys travel as text: seed base64url, public key `ed25519:<b64url>`, enc key `x25519:<b64url>`.
//
//   GET    /info                          -> AuthorityInfo {name, address, dnsServer, httpsPort, adminUrl, caFile, caPem, ttl, zone, identities}
//   GET    /ca.pem                        -> the CA certificate (application/x-pem-file)
//   POST   /identities                    PublishSpec {identity, seed? | publicKey? (any 32 bytes: small-order and non-canonical keys are served verbatim, over DNS), encryptionPublicKey?, previousKeys?: [{publicKey, validUntil}], dns?, https?, relay?, cacheControl?, profile?, capabilities?} -> IdentityInfo
//   POST   /identities/new                NewIdentityOptions {zone?, label?, encryption?, dns?, https?, profile?} -> {identity, seed, publicKey}
//   GET    /identities/<id>               -> IdentityInfo (404 when unknown)
//   POST   /identities/<id>/rotate        {key: seed | 'ed25519:<pub>', graceSeconds?, validUntil?} -> IdentityInfo (the old key's valid_until: validUntil, else now + graceSeconds)
//   POST   /identities/<id>/drop          {what: 'dns' | 'https' | 'both'} -> IdentityInfo
//   POST   /identities/<id>/fault         FaultSpec {dnsKey?, delayMs?: {dns?, https?}, timeout?, httpsStatus?, redirect?, oversize?, badSignature?} -> IdentityInfo
//   DELETE /identities/<id>/fault         -> IdentityInfo (faults cleared)
//   POST   /files                         FileSpec {url, body?, status?, headers?, redirect?, delayMs?, padTo?, otherAddress?} -> HostedFile {url, fetches, bytes}
//   GET    /files?url=<url>               -> HostedFile (404 when nothing is served there)
// Errors: {error, detail} with 400 (bad input), 404 (unknown identity or route), 405, 413.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { encodeBase64url } from '../../../protocol/common/base64.ts';
import { AuthorityError, type AuthorityControl, type FaultSpec, type FileSpec, type NewIdentityOptions, type PublishSpec } from './types.ts';

export interface AdminServer {
  url: string;
  close(): Promise<void>;
}

const BODY_CAP = 65_536;

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_CAP) throw new AuthorityError('body too large', 413);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new AuthorityError('body is not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AuthorityError('body must be a JSON object');
  return value as Record<string, unknown>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

export async function startAdminServer(address: string, port: number, control: AuthorityControl, caPem: () => string): Promise<AdminServer> {
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]!;
    const method = req.method ?? 'GET';
    if (path === '/info' && method === 'GET') return send(res, 200, await control.info());
    if (path === '/ca.pem' && method === 'GET') {
      const pem = caPem();
      res.writeHead(200, { 'content-type': 'application/x-pem-file', 'content-length': Buffer.byteLength(pem) });
      return void res.end(pem);
    }
    if (path === '/files' && method === 'POST') {
      const spec = await readJson(req);
      if (typeof spec.url !== 'string') throw new AuthorityError('a file needs url');
      return send(res, 200, await control.serveFile(spec as unknown as FileSpec));
    }
    if (path === '/files' && method === 'GET') {
      const url = new URL(req.url ?? '/', 'http://admin').searchParams.get('url');
      if (url === null) throw new AuthorityError('GET /files needs ?url=');
      const file = await control.file(url);
      return file ? send(res, 200, file) : send(res, 404, { error: 'not_found', detail: `no file at ${url}` });
    }
    if (path === '/identities' && method === 'POST') return send(res, 200, await control.publish((await readJson(req)) as unknown as PublishSpec));
    if (path === '/identities/new' && method === 'POST') {
      const created = await control.newIdentity((await readJson(req)) as NewIdentityOptions);
      return send(res, 200, { identity: created.identity, seed: encodeBase64url(created.seed), publicKey: created.publicKey });
    }
    const m = /^\/identities\/([^/]+)(?:\/(rotate|drop|fault))?$/.exec(path);
    if (!m) return send(res, 404, { error: 'not_found', detail: `no route ${method} ${path}` });
    const identity = decodeURIComponent(m[1]!);
    const action = m[2];
    if (action === undefined && method === 'GET') {
      const info = await control.identity(identity);
      return info ? send(res, 200, info) : send(res, 404, { error: 'not_found', detail: `unknown identity ${identity}` });
    }
    if (action === 'rotate' && method === 'POST') {
      const body = await readJson(req);
      if (typeof body.key !== 'string') throw new AuthorityError('rotate needs key (a seed, or ed25519:<public key>)');
      const { graceSeconds: grace, validUntil } = body;
      if (grace !== undefined && typeof grace !== 'number') throw new AuthorityError('graceSeconds must be a number');
      if (validUntil !== undefined && typeof validUntil !== 'string') throw new AuthorityError('validUntil must be an RFC 3339 string');
      return send(res, 200, await control.rotate(identity, body.key, { ...(grace !== undefined ? { graceSeconds: grace } : {}), ...(validUntil !== undefined ? { validUntil } : {}) }));
    }
    if (action === 'drop' && method === 'POST') {
      const what = (await readJson(req)).what;
      if (what !== 'dns' && what !== 'https' && what !== 'both') throw new AuthorityError('drop needs what: dns, https or both');
      return send(res, 200, await control.drop(identity, what));
    }
    if (action === 'fault' && method === 'POST') return send(res, 200, await control.fault(identity, (await readJson(req)) as FaultSpec));
    if (action === 'fault' && method === 'DELETE') return send(res, 200, await control.clearFaults(identity));
    return send(res, 405, { error: 'method_not_allowed', detail: `${method} ${path}` });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) return void res.destroy();
      const status = error instanceof AuthorityError ? error.status : 500;
      send(res, status, { error: status === 404 ? 'not_found' : status === 413 ? 'body_too_large' : status === 500 ? 'internal' : 'bad_request', detail: (error as Error).message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actual = (server.address() as { port: number }).port;
  return {
    url: `http://${address}:${actual}`,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
