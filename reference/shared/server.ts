// The one server bootstrap of the reference servers (RP, bridge, relay): the node listener with
// its hot routes beside the h3 app, the bound address, closing, the CLI's log (where --quiet drops
// request lines but never errors) and the last-resort error handler of the app.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { H3, type H3Event } from 'h3';
import { toNodeHandler } from 'srvx/node';
import { wireFromEnv } from '../variants/wire.ts';

/** A log line; `error` lines (internal errors, crashes) are kept even under --quiet. */
export type Log = (line: string, level?: 'error') => void;

export const silent: Log = () => undefined;

/** The CLI's log on stderr, timestamped; `quiet` drops everything but error lines. */
export function cliLog(stderr: { write(s: string): unknown }, quiet: boolean): Log {
  return (line, level) => {
    if (quiet && level !== 'error') return;
    stderr.write(`${new Date().toISOString()} ${line}\n`);
  };
}

/** Logs an internal error (kept under --quiet). */
export function logInternal(log: Log, where: string, error: unknown): void {
  const e = error as { cause?: { stack?: string }; stack?: string; message?: string } | undefined;
  log(`internal error on ${where}: ${e?.cause?.stack ?? e?.stack ?? e?.message ?? String(error)}`, 'error');
}

/**
 * An h3 app whose last resort logs the error and answers `internal()` (the server's 500
 * envelope): handlers answer every client error themselves, so reaching it is a bug.
 */
export function createH3(log: Log, internal: () => Response): H3 {
  return new H3({
    allowMalformedURL: true,
    onError: (error, event: H3Event) => {
      logInternal(log, `${event.req.method} ${event.url.pathname}`, error);
      return internal();
    },
  });
}

export interface Listener {
  server: Server;
  /** The bound address, e.g. http://127.0.0.1:41234 (https:// with `tls`). */
  url: string;
  /** host[:port] as it appears in the URL (IPv6 in brackets). */
  hostPort: string;
  close(): Promise<void>;
}

export interface ListenOptions {
  host: string;
  port: number;
  /** The web handler (h3 app's fetch); answers 503 until the app exists. */
  fetch: () => ((request: Request) => Promise<Response> | Response) | undefined;
  /** Serves a hot route from node's request directly; false to fall back to the web handler. */
  serveNode?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** The answer when the web handler itself throws (logged as an internal error). */
  internal: () => Response;
  log: Log;
  /** Certificate and key (PEM): serve https instead of http (--tls-cert, --tls-key). */
  tls?: TlsFiles;
  /** The request headers read, in bytes, when not node's default (16 KiB or --max-http-header-size). */
  maxHeaderSize?: number;
  /** The JSON error envelope answered 431 to request headers over `maxHeaderSize`. */
  headerOverflow?: () => string;
}

/** A server certificate chain and its private key, PEM. */
export interface TlsFiles {
  cert: string;
  key: string;
}

/**
 * The request a wire variant sees: a plain web Request with its body read, so a variant may read
 * it (or a clone) and still pass it on (the node request's body streams once); the client address
 * and runtime the apps read are carried over.
 */
async function rereadable(request: Request): Promise<Request> {
  const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
  const plain = new Request(request.url, { method: request.method, headers: request.headers, ...(body !== undefined ? { body } : {}) });
  const node = request as Request & { ip?: unknown; runtime?: { node?: Record<string, unknown> } };
  // Without node's request: its body stream is spent, and the body readers prefer it to the copy.
  const runtime = node.runtime?.node ? { ...node.runtime, node: { ...node.runtime.node, req: undefined } } : node.runtime;
  return Object.assign(plain, { ip: node.ip, runtime });
}

/**
 * Listens on host:port (0 picks a free port) before the app exists: an app whose origin is the
 * bound address is built afterwards, and requests until then answer 503.
 */
export async function listen(options: ListenOptions): Promise<Listener> {
  // A wire variant (the harness's sensitivity tests only) sees every request: no hot routes.
  const wire = await wireFromEnv();
  const web = toNodeHandler(async (request: Request) => {
    const fetch = options.fetch();
    if (!fetch) return new Response(null, { status: 503 });
    try {
      return await (wire ? wire(await rereadable(request), async (r) => fetch(r)) : fetch(request));
    } catch (error) {
      logInternal(options.log, `${request.method} ${new URL(request.url).pathname}`, error);
      return options.internal();
    }
  });
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (!wire && options.serveNode?.(req, res)) return;
    void web(req as never, res as never); // srvx types ask for http and http2 at once
  };
  // Over TLS the handlers see https request URLs (srvx reads the socket), so nothing else changes.
  const sized = options.maxHeaderSize !== undefined ? { maxHeaderSize: options.maxHeaderSize } : {};
  const server: Server = options.tls ? createTlsServer({ cert: options.tls.cert, key: options.tls.key, ...sized }, handle) : createServer(sized, handle);
  if (options.headerOverflow) answerClientErrors(server, options.headerOverflow);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  const address = server.address();
  if (!address || typeof address === 'string') {
    await close();
    throw new Error('the server has no TCP address');
  }
  const hostPort = `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return { server, url: `${options.tls ? 'https' : 'http'}://${hostPort}`, hostPort, close };
}

/** What node answers a request it cannot parse, by parser error (its own defaults, kept). */
const PARSE_ANSWERS: Record<string, string> = {
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
};

/**
 * Node's own answers to requests it cannot parse, except that headers over the limit get the
 * server's error envelope (naming its rule) with their 431, not a bare status line.
 */
function answerClientErrors(server: Server, overflow: () => string): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex & { bytesWritten?: number }) => {
    if (error.code === 'HPE_HEADER_OVERFLOW' && socket.writable && !socket.bytesWritten) {
      // The client may still be sending its headers: the rest is read and dropped while the
      // answer goes out (closing on unread bytes would reset the connection before the client
      // read it), for a few seconds at most.
      const body = overflow();
      socket.end(`HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      socket.resume();
      setTimeout(() => socket.destroy(), 5_000).unref();
      return;
    }
    if (socket.writable && !socket.bytesWritten) socket.write(PARSE_ANSWERS[error.code ?? ''] ?? 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    socket.destroy(error);
  });
}
