// The relay bench's peer, run as its own process like the relay: bare h3 on node's HTTP server
// (srvx, as the reference servers use it) with one route that reads the JSON body, checks one
// Ed25519 signature with node:crypto over the body without its signature (the key given in
// BENCH_PUBLIC_KEY, base64url), and answers 202. No storage, no rules: the floor under any relay
// that verifies each message it accepts. Prints `bench-peer-ready <url>` when listening.
import { createPublicKey, verify } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { H3 } from 'h3';
import { toNodeHandler } from 'srvx/node';

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.from(process.env.BENCH_PUBLIC_KEY ?? '', 'base64url')]), format: 'der', type: 'spki' });

const app = new H3().post('/messages', async (event) => {
  const body = (await event.req.json()) as Record<string, unknown>;
  const { signature, ...signed } = body;
  const ok = typeof signature === 'string' && verify(null, Buffer.from(JSON.stringify(signed)), key, Buffer.from(signature, 'base64url'));
  const text = ok ? `{"id":${JSON.stringify(String(signed.id))}}` : '{"error":"bad_signature"}';
  return new Response(text, { status: ok ? 202 : 401, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) } });
});

const handler = toNodeHandler(app.fetch);
const server = createServer((req, res) => void handler(req as never, res as never)); // srvx types ask for http and http2 at once
server.listen(0, '127.0.0.1', () => process.stdout.write(`bench-peer-ready http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
