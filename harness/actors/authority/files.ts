// Files the test authority serves over HTTPS besides identity documents: a URL client's metadata
// document or key set at any path of any host the authority answers for (document 2, Clients 3).
// Each file can answer late, redirect, pad itself past a size cap, or live on the authority's
// other address, and counts its fetches so a suite can see whether a bridge cached it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { validServiceName } from '../../../protocol/common/names.ts';
import { AuthorityError, type FileSpec, type HostedFile } from './types.ts';

interface Served {
  spec: FileSpec;
  fetches: number;
  body: Buffer;
  contentType: string;
}

const MAX_FILES = 10_000;

export class HostedFiles {
  readonly #files = new Map<string, Served>();
  /** host -> served on the other address */
  readonly #hosts = new Map<string, boolean>();
  readonly #held = new Set<ServerResponse>();

  httpsPort = 443;
  /** Plain HTTP, for checking that a fetcher refuses `http` URLs it could have fetched. */
  httpPort = 80;

  constructor(
    /** Host names that belong to identities (a file may not shadow an identity's host). */
    readonly isIdentity: (host: string) => boolean,
  ) {}

  /** The canonical key of a URL: host (lower case) and path, with the port the authority serves on. */
  #key(raw: string): { key: string; host: string } {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new AuthorityError(`${JSON.stringify(raw)} is not a URL`);
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new AuthorityError('files are served over https (or http)');
    const tls = u.protocol === 'https:';
    const port = u.port === '' ? (tls ? 443 : 80) : Number(u.port);
    const served = tls ? this.httpsPort : this.httpPort;
    if (port !== served) throw new AuthorityError(`the authority serves ${tls ? 'HTTPS' : 'HTTP'} on port ${served}, not ${port}`);
    const host = validServiceName(u.hostname);
    if (host === undefined) throw new AuthorityError(`${u.hostname} is not a DNS name the authority can answer for`);
    return { key: `${u.protocol}//${host}${u.pathname}`, host };
  }

  serve(spec: FileSpec): HostedFile {
    const { key, host } = this.#key(spec.url);
    if (this.isIdentity(host)) throw new AuthorityError(`${host} is an identity's host; serve files under another name`);
    if (spec.status !== undefined && (!Number.isInteger(spec.status) || spec.status < 100 || spec.status > 599)) throw new AuthorityError('status must be an HTTP status');
    if (spec.padTo !== undefined && (!Number.isInteger(spec.padTo) || spec.padTo < 0 || spec.padTo > 4_194_304)) throw new AuthorityError('padTo must be 0 .. 4 MiB');
    if (!this.#files.has(key) && this.#files.size >= MAX_FILES) throw new AuthorityError('too many files');
    const isText = typeof spec.body === 'string';
    let body = Buffer.from(spec.body === undefined ? '' : isText ? (spec.body as string) : JSON.stringify(spec.body), 'utf8');
    if (spec.padTo !== undefined) {
      const value = spec.body;
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AuthorityError('padTo needs a JSON object body');
      const bare = Buffer.byteLength(JSON.stringify({ ...value, padding: '' }));
      if (bare > spec.padTo) throw new AuthorityError(`the body is already ${bare} bytes, more than padTo`);
      body = Buffer.from(JSON.stringify({ ...value, padding: 'x'.repeat(spec.padTo - bare) }), 'utf8');
    }
    const previous = this.#files.get(key);
    this.#files.set(key, { spec, fetches: previous?.fetches ?? 0, body, contentType: isText ? 'text/plain; charset=utf-8' : 'application/json' });
    this.#hosts.set(host, spec.otherAddress === true);
    return { url: spec.url, fetches: previous?.fetches ?? 0, bytes: body.length };
  }

  file(url: string): HostedFile | undefined {
    const f = this.#files.get(this.#key(url).key);
    return f ? { url: f.spec.url, fetches: f.fetches, bytes: f.body.length } : undefined;
  }

  /** For DNS: undefined when no file lives on `host`, else whether it is on the other address. */
  onOther(host: string): boolean | undefined {
    return this.#hosts.get(host);
  }

  /** Answers a request for a hosted file; false when none lives at that host and path. */
  handle(req: IncomingMessage, res: ServerResponse, host: string, path: string, tls = true): boolean {
    const f = this.#files.get(`${tls ? 'https:' : 'http:'}//${host}${path}`);
    if (!f) return this.#hosts.has(host) ? (notFound(res, host, path), true) : false;
    f.fetches++;
    const { spec } = f;
    const send = () => {
      if (spec.redirect !== undefined) {
        res.writeHead(302, { location: spec.redirect, 'content-length': 0, 'cache-control': 'no-store' });
        return void res.end();
      }
      res.writeHead(spec.status ?? 200, { 'content-type': f.contentType, 'content-length': f.body.length, 'cache-control': 'no-store', ...spec.headers });
      res.end(req.method === 'HEAD' ? undefined : f.body);
    };
    if (spec.delayMs === undefined || spec.delayMs <= 0) {
      send();
      return true;
    }
    this.#held.add(res);
    const t = setTimeout(() => {
      this.#held.delete(res);
      if (!res.destroyed) send();
    }, spec.delayMs);
    res.on('close', () => {
      clearTimeout(t);
      this.#held.delete(res);
    });
    return true;
  }

  /** True while `res` is held back on purpose (a file published with delayMs). */
  holding(res: ServerResponse): boolean {
    return this.#held.has(res);
  }

  close(): void {
    for (const res of this.#held) res.destroy();
  }
}

function notFound(res: ServerResponse, host: string, path: string): void {
  const text = JSON.stringify({ error: 'not_found', detail: `no file at https://${host}${path}` });
  res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}
