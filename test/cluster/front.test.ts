// The round-robin front (harness/run/front.ts) on real loopback sockets: connections alternate
// between two backends, a dead backend is skipped, bytes pass both ways untouched (a megabyte
// echoed back, an HTTP keep-alive connection, a stream that writes after a pause), a loopback
// caller's address reaches the backend, and closing the front ends what it carries.
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { startFront, type Backend, type Front } from '../../harness/run/front.ts';
import { closedPort } from '../../harness/run/spawn.ts';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

/** A TCP server that names itself first, then echoes. */
async function echo(name: string): Promise<{ backend: Backend; server: Server }> {
  const server = createServer((s) => {
    s.write(`${name}\n`);
    s.pipe(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise((r) => server.close(() => r())));
  return { backend: { host: '127.0.0.1', port: (server.address() as { port: number }).port }, server };
}

async function front(backends: Backend[]): Promise<Front> {
  const f = await startFront({ backends });
  cleanup.push(() => f.close());
  return f;
}

/** Connects, sends `payload`, ends, and reads everything until the far side closes. */
function exchange(f: Front, payload: Buffer = Buffer.alloc(0)): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s: Socket = createConnection({ host: f.host, port: f.port, allowHalfOpen: true });
    s.on('data', (c: Buffer) => chunks.push(c));
    s.once('error', reject);
    s.once('end', () => {
      s.end();
      resolve(Buffer.concat(chunks));
    });
    s.once('connect', () => s.end(payload));
  });
}

const nameOf = (b: Buffer) => b.toString('latin1').split('\n')[0];

describe('the round-robin front', () => {
  it("keeps a loopback caller's address on the way to the backend (the relays limit per IP)", async () => {
    const server = createServer((s) => s.end(`${s.remoteAddress}\n`));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => server.close(() => r())));
    const f = await front([{ host: '127.0.0.1', port: (server.address() as { port: number }).port }]);
    const seen = await new Promise<string>((resolve, reject) => {
      const s = createConnection({ host: f.host, port: f.port, localAddress: '127.3.4.5' });
      let got = '';
      s.on('data', (c: Buffer) => (got += c.toString('latin1')));
      s.once('error', reject);
      s.once('end', () => resolve(got.trim()));
    });
    expect(seen).toBe('127.3.4.5');
  });

  it('hands each new connection to the next backend', async () => {
    const [a, b] = [await echo('a'), await echo('b')];
    const f = await front([a.backend, b.backend]);
    const names: string[] = [];
    for (let i = 0; i < 6; i++) names.push(nameOf(await exchange(f))!);
    expect(names).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
    expect([...f.routed().values()]).toEqual([3, 3]);
  });

  it('skips a backend that refuses connections (a killed process), and one that dies later', async () => {
    const [a, b] = [await echo('a'), await echo('b')];
    const dead: Backend = { host: '127.0.0.1', port: await closedPort() };
    const f = await front([a.backend, dead, b.backend]);
    const names: string[] = [];
    for (let i = 0; i < 6; i++) names.push(nameOf(await exchange(f))!);
    expect(names.every((n) => n === 'a' || n === 'b')).toBe(true);
    expect(names.filter((n) => n === 'a').length).toBeGreaterThanOrEqual(2);
    expect(names.filter((n) => n === 'b').length).toBeGreaterThanOrEqual(2);
    await new Promise<void>((r) => a.server.close(() => r()));
    for (let i = 0; i < 4; i++) expect(nameOf(await exchange(f))).toBe('b');
  });

  it('refuses (closes) a connection when no backend answers', async () => {
    const f = await front([{ host: '127.0.0.1', port: await closedPort() }]);
    // Nothing comes back: an empty close, or a reset.
    const got = await exchange(f).then(
      (b) => b.length,
      (e: Error) => e.message,
    );
    expect(got === 0 || /ECONNRESET|EPIPE/.test(String(got)), String(got)).toBe(true);
  });

  it('pipes bytes both ways untouched: a megabyte echoed back', async () => {
    const a = await echo('a');
    const f = await front([a.backend]);
    const payload = randomBytes(1024 * 1024);
    const back = await exchange(f, payload);
    expect(back.subarray(0, 2).toString()).toBe('a\n');
    expect(back.subarray(2).equals(payload)).toBe(true);
  });

  it('carries HTTP keep-alive and a stream that writes after a pause', async () => {
    let connections = 0;
    const http: HttpServer = createHttpServer((req, res) => {
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: ready\ndata: {}\n\n');
        setTimeout(() => res.end('event: message\ndata: later\n\n'), 300);
        return;
      }
      res.end(`hello ${req.url}`);
    });
    http.on('connection', () => connections++);
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => (http.closeAllConnections(), http.close(() => r()))));
    const f = await front([{ host: '127.0.0.1', port: (http.address() as { port: number }).port }]);
    const agent = new Agent({ connections: 1 });
    cleanup.push(() => agent.close());
    for (let i = 0; i < 5; i++) {
      const r = await request(`${f.url}/n${i}`, { dispatcher: agent });
      expect(await r.body.text()).toBe(`hello /n${i}`);
    }
    expect(connections).toBe(1);
    const s = await request(`${f.url}/stream`, { dispatcher: agent });
    expect(await s.body.text()).toBe('event: ready\ndata: {}\n\nevent: message\ndata: later\n\n');
  });

  it('ends the connections it carries when closed', async () => {
    const server = createServer(() => undefined); // accepts and never answers
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const f = await startFront({ backends: [{ host: '127.0.0.1', port: (server.address() as { port: number }).port }] });
    const s = createConnection({ host: f.host, port: f.port });
    await new Promise((r) => s.once('connect', r));
    await new Promise((r) => setTimeout(r, 50));
    const closed = new Promise((r) => s.once('close', r));
    s.on('error', () => undefined);
    await f.close();
    await closed;
    server.close();
  });
});
