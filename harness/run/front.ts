// A round-robin TCP front: one listening address for several processes of one reference server,
// as a load balancer puts them behind one address (`run --reference --cluster`). Each new
// connection goes to the next backend; one that refuses the connection (a killed process) is
// skipped for the next, so the front keeps serving while any backend lives. Bytes are piped both
// ways untouched, so keep-alive, SSE streams and half-closes pass as they are, and a loopback
// caller's address reaches the backend as its own. It lives in the harness because the harness
// starts the reference (and never imports reference/).
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface Backend {
  host: string;
  port: number;
}

export interface Front {
  /** http://HOST:PORT, no trailing slash. */
  url: string;
  host: string;
  port: number;
  /** The backends, in the round's order (replaced by setBackends). */
  backends(): Backend[];
  setBackends(backends: Backend[]): void;
  /** Connections handed to each backend so far (by `host:port`). */
  routed(): Map<string, number>;
  /** Stops listening and ends every connection it carries. */
  close(): Promise<void>;
}

export interface FrontOptions {
  backends: Backend[];
  host?: string;
  /** 0 (default) picks a free one. */
  port?: number;
}

const key = (b: Backend) => `${b.host}:${b.port}`;
const loopback = (address: string | undefined): address is string => address !== undefined && /^127\.\d+\.\d+\.\d+$/.test(address);

export async function startFront(options: FrontOptions): Promise<Front> {
  let backends = [...options.backends];
  let next = 0;
  const routed = new Map<string, number>();
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };

  const server: Server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (client) => {
    track(client);
    client.on('error', () => client.destroy());
    // Each connection starts at the next backend; a refusal moves on to the one after it.
    const start = next++;
    const tried = Math.max(backends.length, 1);
    const attempt = (i: number): void => {
      if (i >= tried || backends.length === 0 || client.destroyed) {
        client.destroy();
        return;
      }
      const b = backends[(start + i) % backends.length]!;
      // A caller on loopback keeps its address on the way through (a balancer's forwarded address):
      // the backends limit per IP (ra.availability.ip-limit), and on loopback any 127/8 address is ours.
      const from = loopback(client.remoteAddress) && loopback(b.host) ? { localAddress: client.remoteAddress } : {};
      const upstream = createConnection({ host: b.host, port: b.port, allowHalfOpen: true, ...from });
      track(upstream);
      upstream.once('error', () => {
        upstream.destroy();
        attempt(i + 1);
      });
      upstream.once('connect', () => {
        if (client.destroyed) return void upstream.destroy();
        routed.set(key(b), (routed.get(key(b)) ?? 0) + 1);
        // Connected: from now on an error on either side (a reset, a killed process) ends both;
        // no retry mid-stream. A clean end passes through the pipes as a half-close.
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    attempt(0);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as { address: string; port: number };
  return {
    url: `http://${address.address}:${address.port}`,
    host: address.address,
    port: address.port,
    backends: () => [...backends],
    setBackends: (b) => void (backends = [...b]),
    routed: () => new Map(routed),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
