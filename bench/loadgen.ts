// A cheap HTTP/1.1 load generator for the RP bench: keep-alive sockets (node:net) writing
// requests serialized before the clock starts, one in flight per socket, and reading back only
// the status line and Content-Length of each answer (then skipping that many body bytes). A
// client library's per-request cost (header objects, body streams, promises) would otherwise
// take CPU from the RP on the same cores.
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface RawRequest {
  method: string;
  path: string;
  headers: Readonly<Record<string, string>>;
  body: string | Uint8Array;
}

export interface LoadResult {
  /** Answers per status code. */
  statuses: Map<number, number>;
  /** Per-request latency in ms, in completion order. */
  latencies: Float64Array;
  seconds: number;
  /** The first non-2xx answer (status line and body), for the error message. */
  firstFailure?: string;
}

/** `METHOD path HTTP/1.1` plus Host, the headers and Content-Length, and the body: one buffer. */
export function serialize(host: string, r: RawRequest): Buffer {
  const body = Buffer.from(r.body);
  let head = `${r.method} ${r.path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [k, v] of Object.entries(r.headers)) head += `${k}: ${v}\r\n`;
  head += `content-length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

const CRLFCRLF = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;

/**
 * Sends every request once over `connections` keep-alive sockets to `url` (http://host:port) and
 * resolves when all are answered. Several URLs (processes serving one service) get the sockets in
 * turn, and every socket takes the next request when it is free: a client-side split of the load. An answer without Content-Length (chunked) or a closed socket
 * with requests still queued rejects: the bench accepts no ambiguity about what was answered.
 */
export async function runLoad(url: string | readonly string[], requests: readonly Buffer[], connections: number): Promise<LoadResult> {
  const urls = typeof url === 'string' ? [url] : url;
  const sockets = await Promise.all(
    Array.from({ length: Math.min(connections, requests.length) }, (_, i) => {
      const { hostname, port } = new URL(urls[i % urls.length]!);
      return open(hostname.startsWith('[') ? hostname.slice(1, -1) : hostname, Number(port));
    }),
  );
  const statuses = new Map<number, number>();
  const latencies = new Float64Array(requests.length);
  let done = 0;
  let next = 0;
  let firstFailure: string | undefined;
  const t0 = performance.now();
  try {
    await new Promise<void>((resolve, reject) => {
      for (const socket of sockets) {
        let buffered: Buffer | undefined;
        let sentAt = 0;
        let inFlight = false;
        let failed = false;
        const fail = (error: Error) => {
          if (failed) return;
          failed = true;
          reject(error);
        };
        const send = () => {
          if (next >= requests.length) return;
          const r = requests[next++]!;
          sentAt = performance.now();
          inFlight = true;
          socket.write(r);
        };
        socket.on('data', (chunk: Buffer) => {
          buffered = buffered === undefined ? chunk : Buffer.concat([buffered, chunk]);
          // One request in flight per socket, so at most one answer is complete in `buffered`.
          const end = buffered.indexOf(CRLFCRLF);
          if (end === -1) return;
          const head = buffered.toString('latin1', 0, end);
          const m = CONTENT_LENGTH.exec(head);
          if (!head.startsWith('HTTP/1.1 ') || !m) return fail(new Error(`unexpected answer head: ${head.slice(0, 200)}`));
          const total = end + 4 + Number(m[1]);
          if (buffered.length < total) return;
          if (buffered.length > total) return fail(new Error('bytes after the answer with one request in flight'));
          const status = Number(head.slice(9, 12));
          latencies[done++] = performance.now() - sentAt;
          inFlight = false;
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if ((status < 200 || status >= 300) && firstFailure === undefined) firstFailure = `${head.slice(0, head.indexOf('\r\n'))} ${buffered.toString('utf8', end + 4, total)}`;
          buffered = undefined;
          if (done === requests.length) resolve();
          else send();
        });
        socket.on('error', fail);
        socket.on('close', () => {
          if (inFlight) fail(new Error(`the RP closed a connection after ${done} of ${requests.length} answers`));
        });
        send();
      }
    });
  } finally {
    for (const s of sockets) s.destroy();
  }
  const seconds = (performance.now() - t0) / 1000;
  return firstFailure === undefined ? { statuses, latencies, seconds } : { statuses, latencies, seconds, firstFailure };
}

function open(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, noDelay: true });
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}
