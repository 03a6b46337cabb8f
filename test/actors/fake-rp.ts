// A small RP for the signer tests (not the reference RP): metadata, the start contract, a
// reference link, delivery verified by the protocol verifier, poll and resume. `tamper` changes
// what it serves so the signer's refusals can be seen.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { createVerifier } from '../../protocol/signin/verifier.ts';
import { MemoryNonceStore } from '../../protocol/signin/nonce.ts';
import { StaticResolver } from '../../protocol/signin/resolver.ts';
import { decodeObject, encodeObject } from '../../protocol/common/codec.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';

export interface Tamper {
  metadata?: (m: Record<string, unknown>) => Record<string, unknown>;
  metadataStatus?: number;
  metadataLocation?: string;
  metadataBody?: string;
  request?: (r: Record<string, unknown>) => Record<string, unknown>;
  referenceBody?: (b: Record<string, unknown>) => Record<string, unknown>;
  resumeUri?: string;
}

interface Tx {
  request: Record<string, unknown>;
  binding: string;
  pollSecret: string;
  match: string;
  code: string;
  state: 'pending' | 'approved_same' | 'approved_cross' | 'completed' | 'ended';
  identity?: string;
  resume?: string;
}

export interface FakeRp {
  origin: string;
  resolver: StaticResolver;
  tamper: Tamper;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeRp(): Promise<FakeRp> {
  const resolver = new StaticResolver();
  const tamper: Tamper = {};
  const txs = new Map<string, Tx>();
  let origin = '';
  const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(value));
  };
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', origin);
      const cookie = /svc_binding=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
      if (url.pathname === '/.well-known/svc.json') {
        if (tamper.metadataStatus) {
          res.writeHead(tamper.metadataStatus, tamper.metadataLocation ? { location: tamper.metadataLocation } : {});
          return res.end();
        }
        if (tamper.metadataBody !== undefined) return json(res, 200, JSON.parse(tamper.metadataBody));
        const m = { svc_auth: '1', origin, name: 'Fake RP', response_uris: [`${origin}/svc/response`], poll_uri: `${origin}/svc/poll`, context_uri: `${origin}/svc/context` };
        return json(res, 200, tamper.metadata ? tamper.metadata(m) : m);
      }
      if (url.pathname === '/login' && req.method === 'POST') {
        const now = Date.now();
        let request: Record<string, unknown> = {
          svc_auth: '1',
          request_id: randomBytes(8).toString('hex'),
          audience: origin,
          nonce: randomBytes(16).toString('base64url'),
          issued_at: formatRfc3339(now),
          expires_at: formatRfc3339(now + 300_000),
          action: 'signin',
          response_uri: `${origin}/svc/response`,
        };
        if (tamper.request) request = tamper.request(request);
        const tx: Tx = {
          request,
          binding: randomBytes(16).toString('hex'),
          pollSecret: randomBytes(16).toString('hex'),
          match: String(10 + (randomBytes(1)[0]! % 90)),
          code: 'ABCD1234',
          state: 'pending',
        };
        tx.code = randomBytes(4).toString('hex').toUpperCase();
        txs.set(request.request_id as string, tx);
        return json(
          res,
          201,
          { request: encodeObject(request), request_uri: `${origin}/r/${tx.code}`, poll_secret: tx.pollSecret, match_code: tx.match },
          { 'set-cookie': `svc_binding=${tx.binding}; Path=/; HttpOnly; SameSite=Lax` },
        );
      }
      if (url.pathname.startsWith('/r/')) {
        const tx = [...txs.values()].find((t) => t.code === url.pathname.slice(3));
        if (!tx) return json(res, 404, { error: 'reference_gone', detail: 'unknown' });
        const b = { request: encodeObject(tx.request) };
        return json(res, 200, tamper.referenceBody ? tamper.referenceBody(b) : b, { 'access-control-allow-origin': '*' });
      }
      if (url.pathname === '/svc/context') {
        return json(res, 200, { request_id: url.searchParams.get('request_id'), started_at: formatRfc3339(Date.now()), browser: 'Test browser', client: 'Fake RP', client_host: new URL(origin).host });
      }
      if (url.pathname === '/svc/response' && req.method === 'POST') {
        const text = await body(req);
        const delivery = (req.headers['content-type'] ?? '').startsWith('application/json') ? (JSON.parse(text) as { response: string; match?: string }) : { response: text };
        const decoded = decodeObject(delivery.response);
        if (!decoded.ok) return json(res, 400, { error: 'malformed_response', detail: decoded.reason });
        const tx = txs.get(decoded.value.request_id as string);
        if (tx?.state !== 'pending') return json(res, 409, { error: 'unknown_transaction', detail: 'no such transaction' });
        if (delivery.match !== undefined && delivery.match !== tx.match) {
          tx.state = 'ended';
          return json(res, 403, { error: 'match_mismatch', detail: 'wrong match code', rule: 'ns.transaction.match-wrong' });
        }
        const verify = createVerifier({ profile: (await import('../../protocol/common/profile.ts')).defaultProfile, origin, resolver, nonces: new MemoryNonceStore() });
        const verdict = await verify(decoded.value);
        if (!verdict.ok) return json(res, verdict.rule <= 4 ? 400 : 401, { error: verdict.code, detail: verdict.detail, rule: verdict.ruleId });
        tx.identity = verdict.identity;
        if (delivery.match !== undefined) {
          tx.state = 'approved_cross';
          return json(res, 200, { status: 'ok' });
        }
        tx.state = 'approved_same';
        tx.resume = randomBytes(16).toString('hex');
        return json(res, 200, { status: 'ok', resume_uri: tamper.resumeUri ?? `${origin}/svc/resume?code=${tx.resume}` });
      }
      if (url.pathname === '/svc/poll' && req.method === 'POST') {
        const { poll_secret } = JSON.parse(await body(req)) as { poll_secret: string };
        const tx = [...txs.values()].find((t) => t.pollSecret === poll_secret);
        if (!tx) return json(res, 404, { error: 'unknown_transaction', detail: 'no such transaction' });
        if (tx.state === 'approved_cross') tx.state = 'completed';
        const status = tx.state === 'approved_same' ? 'approved' : tx.state;
        return json(res, 200, status === 'completed' ? { status, identity: tx.identity } : { status });
      }
      if (url.pathname === '/svc/resume') {
        const tx = [...txs.values()].find((t) => t.resume !== undefined && t.resume === url.searchParams.get('code'));
        if (!tx) return json(res, 410, { error: 'resume_refused', detail: 'gone' });
        if (cookie !== tx.binding) return json(res, 403, { error: 'resume_refused', detail: 'other browser' });
        tx.state = 'completed';
        res.writeHead(303, { location: '/' });
        return res.end();
      }
      return json(res, 404, { error: 'not_found', detail: url.pathname });
    })().catch((e: unknown) => json(res, 500, { error: 'internal', detail: String(e) }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    origin,
    resolver,
    tamper,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
