// The network resolver (verification rule 6, ns.resolve.chain): the identity document at
// `https://<identity>/.well-known/<name>/id.json`, then the TXT record `_<name>.<identity>`
// (`<name>-pubkey=ed25519:<key>`). A document must verify under its own key and name the identity;
// when both sources publish a key they must agree, else it fails closed (key_mismatch).
// `previous_keys` come from the document. A resolution is reused only for as long as the document's
// `Cache-Control: max-age` allows (at most RESOLUTION_CACHE_MAX_SECONDS; node:dns does not expose
// TXT TTLs, so the document's lifetime governs both answers); `no-store`, `no-cache` or no
// max-age means every resolution asks again, so a rotation at the test authority (which serves
// `no-store`) is seen at once. Concurrent resolutions of one identity share one lookup. Real DNS (node:dns), real HTTPS (undici) trusting --ca in addition to the
// system roots, a 16 KiB body cap, no redirects and a timeout per lookup.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { limits } from '../../schemas/ts/limits.ts';
import type { Profile } from '../../protocol/common/profile.ts';
import { ResolutionError, type ResolvedIdentity, type Resolver } from '../../protocol/signin/resolver.ts';
import { previousKeys, verifyDocument } from '../../protocol/common/document.ts';
import { parseKey } from '../../protocol/common/keys.ts';
import { validServiceName } from '../../protocol/common/names.ts';
import { Dns, dnsErrorCode } from './dns.ts';
import { trusting } from '../../protocol/common/trust.ts';

export interface NetworkResolverOptions {
  profile: Profile;
  /** `HOST:PORT` of the DNS server to ask (a test authority); default: the system's. */
  dnsServer?: string;
  /** PEM file of an extra CA to trust for the well-known host (a test authority's CA). */
  caFile?: string;
  /** PEM text of an extra CA (instead of caFile). */
  caPem?: string;
  /** Timeout of each lookup (DNS query, HTTPS fetch), ms. Default limits.resolution_timeout_seconds. */
  timeoutMs?: number;
  /** HTTPS port of well-known hosts (tests only; default 443). */
  httpsPort?: number;
}

/** The identity document body cap (project decision: the documents set none). */
export const DOCUMENT_MAX_BYTES = limits.identity_document_body_max_bytes;
export const DEFAULT_RESOLVER_TIMEOUT_MS = limits.resolution_timeout_seconds * 1000;

/** Project decision: the longest an RP reuses a resolution, whatever the document allows. */
export const RESOLUTION_CACHE_MAX_SECONDS = limits.resolution_cache_max_seconds;

type Fetched = { kind: 'absent'; why: string } | { kind: 'document'; doc: Record<string, unknown>; maxAgeSeconds: number };

/** Seconds a response may be reused under its Cache-Control (0: not at all). */
export function cacheSeconds(header: string | string[] | undefined): number {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  const directives = value
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0;
  const maxAge = directives.map((d) => /^max-age=(\d+)$/.exec(d)).find((m) => m !== null);
  return maxAge ? Math.min(Number(maxAge[1]), RESOLUTION_CACHE_MAX_SECONDS) : 0;
}

export class NetworkResolver implements Resolver {
  readonly #profile: Profile;
  readonly #dns: Dns;
  readonly #agent: Agent;
  readonly #timeoutMs: number;
  readonly #port: number;
  readonly #cache = new Map<string, { value: ResolvedIdentity; until: number }>();
  readonly #inflight = new Map<string, Promise<ResolvedIdentity>>();

  constructor(options: NetworkResolverOptions) {
    this.#profile = options.profile;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_RESOLVER_TIMEOUT_MS;
    this.#port = options.httpsPort ?? 443;
    this.#dns = new Dns({ ...(options.dnsServer !== undefined ? { server: options.dnsServer } : {}), timeoutMs: this.#timeoutMs });
    const extra = options.caPem ?? (options.caFile !== undefined ? readFileSync(options.caFile, 'utf8') : undefined);
    const lookup = this.#dns.lookup();
    this.#agent = new Agent({
      connect: {
        timeout: this.#timeoutMs,
        ...trusting(extra),
        ...(lookup ? { lookup: lookup as never } : {}),
      },
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
    });
  }

  async resolve(raw: string): Promise<ResolvedIdentity> {
    const identity = validServiceName(raw);
    if (identity === undefined) throw new ResolutionError('not_found', 'not a valid service name');
    const cached = this.#cache.get(identity);
    if (cached && cached.until > Date.now()) return cached.value;
    if (cached) this.#cache.delete(identity);
    let pending = this.#inflight.get(identity);
    if (!pending) {
      pending = this.#lookup(identity).finally(() => this.#inflight.delete(identity));
      this.#inflight.set(identity, pending);
    }
    return pending;
  }

  async #lookup(identity: string): Promise<ResolvedIdentity> {
    const [fetched, txtKey] = await Promise.all([this.#document(identity), this.#txt(identity)]);
    let docKey: Uint8Array | undefined;
    if (fetched.kind === 'document') {
      docKey = parseKey(fetched.doc.public_key, 'signing');
      if (!docKey) throw new ResolutionError('invalid_document', 'the identity document has no usable public_key');
    }
    if (docKey && txtKey && !Buffer.from(docKey).equals(txtKey)) {
      throw new ResolutionError('key_mismatch', 'the identity document and the DNS TXT record publish different keys');
    }
    if (docKey && fetched.kind === 'document') {
      const value: ResolvedIdentity = { identity, publicKey: docKey, previousKeys: previousKeys(fetched.doc), source: 'https', document: fetched.doc };
      if (fetched.maxAgeSeconds > 0) {
        if (this.#cache.size >= 10_000) this.#cache.clear();
        this.#cache.set(identity, { value, until: Date.now() + fetched.maxAgeSeconds * 1000 });
      }
      return value;
    }
    if (txtKey) return { identity, publicKey: txtKey, previousKeys: [], source: 'dns' };
    throw new ResolutionError('not_found', `${identity} publishes no key (${fetched.kind === 'absent' ? fetched.why : 'no document'}; no TXT record)`);
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  /** The TXT key, undefined when there is no such record; throws when DNS does not answer. */
  async #txt(identity: string): Promise<Uint8Array | undefined> {
    const name = `${this.#profile.ids.dns_txt_label}.${identity}`;
    let records: string[];
    try {
      records = await this.#dns.txt(name);
    } catch (error) {
      throw new ResolutionError('unreachable', `DNS TXT ${name} failed (${dnsErrorCode(error)})`);
    }
    const prefix = this.#profile.ids.txt_pubkey_prefix;
    const keys = records.filter((r) => r.startsWith(prefix)).map((r) => parseKey(r.slice(prefix.length), 'signing'));
    if (keys.length === 0) return undefined;
    const first = keys[0];
    if (!first || keys.some((k) => !k || !Buffer.from(k).equals(first))) throw new ResolutionError('key_mismatch', `the TXT records at ${name} are unusable or disagree`);
    return first;
  }

  /** The verified identity document, or absent (404, no host, connection refused). */
  async #document(identity: string): Promise<Fetched> {
    const port = this.#port === 443 ? '' : `:${this.#port}`;
    const target = `https://${identity}${port}${this.#profile.ids.id_document_path}`;
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(target, {
        dispatcher: this.#agent,
        method: 'GET',
        headers: { accept: 'application/json' },
        reset: true,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      const code = dnsErrorCode(error) === 'EUNKNOWN' ? dnsErrorCode((error as { cause?: unknown }).cause) : dnsErrorCode(error);
      if (code === 'ENOTFOUND' || code === 'ECONNREFUSED' || code === 'ENODATA') return { kind: 'absent', why: `${target}: ${code}` };
      throw new ResolutionError('unreachable', `${target} could not be fetched (${code === 'EUNKNOWN' ? (error as Error).message : code})`);
    }
    if (res.statusCode === 404 || res.statusCode === 410) {
      await res.body.dump().catch(() => undefined);
      return { kind: 'absent', why: `${target}: ${res.statusCode}` };
    }
    if (res.statusCode >= 300 && res.statusCode < 400) {
      await res.body.dump().catch(() => undefined);
      throw new ResolutionError('invalid_document', `${target} answered a redirect (${res.statusCode}); redirects are not followed`);
    }
    if (res.statusCode !== 200) {
      await res.body.dump().catch(() => undefined);
      throw new ResolutionError('unreachable', `${target} answered ${res.statusCode}`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of res.body) {
        total += (chunk as Buffer).length;
        if (total > DOCUMENT_MAX_BYTES) {
          res.body.destroy();
          throw new ResolutionError('invalid_document', `${target} is larger than ${DOCUMENT_MAX_BYTES} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (error) {
      if (error instanceof ResolutionError) throw error;
      throw new ResolutionError('unreachable', `${target}: reading the body failed`);
    }
    let doc: unknown;
    try {
      doc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      throw new ResolutionError('invalid_document', `${target} is not JSON`);
    }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new ResolutionError('invalid_document', `${target} is not a JSON object`);
    const record = doc as Record<string, unknown>;
    const check = verifyDocument(record);
    if (!check.ok) throw new ResolutionError('invalid_document', `${target}: ${check.reason}`);
    if (validServiceName(record.identity) !== identity) throw new ResolutionError('invalid_document', `${target} names another identity`);
    return { kind: 'document', doc: record, maxAgeSeconds: cacheSeconds(res.headers['cache-control']) };
  }
}
