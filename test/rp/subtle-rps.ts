// The reference RP broken in the subtle ways the rp suite's checks/subtle.ts looks for, one bug
// each (tests may import reference/; the harness never does).
import { createPublicKey, verify as opensslVerify } from 'node:crypto';
import type { Authority } from '../../harness/actors/authority/index.ts';
import { canonicalString } from '../../protocol/common/canonical.ts';
import { byteLength, decodeBase64Any } from '../../protocol/common/base64.ts';
import { decodeObject, encodeObject } from '../../protocol/common/codec.ts';
import { keyValidAt } from '../../protocol/common/document.ts';
import { parseRfc3339 } from '../../protocol/common/time.ts';
import { MemoryNonceStore } from '../../protocol/signin/nonce.ts';
import type { Resolver } from '../../protocol/signin/resolver.ts';
import { createVerifier, type Verdict } from '../../protocol/signin/verifier.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { startRp, type RunningRp, type StartRpOptions } from '../../reference/rp/app.ts';
import { NetworkResolver } from '../../reference/resolve/network.ts';
import { errorJson } from '../../reference/shared/http.ts';
import { readBody, RP_BODY } from '../../reference/shared/body.ts';
import { HttpError } from '../../reference/shared/errors.ts';
import { TEST_RESUME_TTL_S } from './helpers.ts';

export type SubtleBreakage = 'previous-key-at-delivery' | 'lax-ed25519' | 'signature-before-match' | 'resume-never-expires' | 'long-statement' | 'sloppy-body-cap';

/** The resume lifetime the tests declare (and give the healthy reference), so the expiry check waits little. */
/** The body cap the sloppy RP declares; it only refuses bodies over twice that. */
export const SLOPPY_CAP = 16_384;

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The healthy reference RP as these tests run it (a short resume lifetime). */
export function healthyRp(authority: Authority): Promise<RunningRp> {
  return startRp(options(authority, TEST_RESUME_TTL_S));
}

function options(authority: Authority, resumeTtlSeconds: number): StartRpOptions {
  return { resolver: { dnsServer: authority.dnsServer, caFile: authority.caFile, timeoutMs: 1500 }, resumeTtlSeconds };
}

/**
 * - previous-key-at-delivery: previous keys are judged at delivery time (entries whose
 *   valid_until has passed are dropped when resolving), not at the request's issued_at;
 * - lax-ed25519: a signature refused by the strict verifier is tried again with plain OpenSSL
 *   verify (no canonical or small-order precheck of the key);
 * - signature-before-match: the signature is checked before the match code, so a bad signature
 *   with a wrong match code is refused without ending the transaction;
 * - resume-never-expires: resume codes live an hour while the RP declares TEST_RESUME_TTL_S;
 * - long-statement: the start contract issues any statement it is asked for, over 300 bytes too;
 * - sloppy-body-cap: declares SLOPPY_CAP but refuses with 413 only bodies over twice that.
 */
export async function subtleRp(kind: SubtleBreakage, authority: Authority): Promise<RunningRp> {
  // The RP's own resolver is private: the variants that need one make another, resolving alike.
  const own: NetworkResolver[] = [];
  const resolver = (): NetworkResolver => {
    const r = new NetworkResolver({ profile: ctx.profile, dnsServer: authority.dnsServer, caFile: authority.caFile, timeoutMs: 1500 });
    own.push(r);
    return r;
  };
  const deps: { resolver?: Resolver } = {};
  if (kind === 'previous-key-at-delivery') {
    deps.resolver = {
      resolve: async (identity) => {
        const found = await inner.resolve(identity);
        const now = Date.now();
        return { ...found, previousKeys: found.previousKeys.filter((k) => k.validUntil === undefined || k.validUntil >= now) };
      },
    };
  }
  const rp = await startRp(options(authority, kind === 'resume-never-expires' ? 3600 : TEST_RESUME_TTL_S), deps);
  const ctx = rp.app.context;
  const inner = resolver();
  const close = rp.close;
  rp.close = async () => {
    await close();
    await Promise.all(own.map((r) => r.close()));
  };

  if (kind === 'lax-ed25519') {
    const strict = ctx.verify;
    ctx.verify = async (response, beforeNonce): Promise<Verdict> => {
      const verdict = await strict(response, beforeNonce);
      if (verdict.ok || verdict.code !== 'signature_invalid') return verdict;
      const r = response as Record<string, unknown>;
      if (r.key_id !== 'identity') return verdict;
      const resolved = await inner.resolve(r.identity as string);
      const issuedAt = parseRfc3339(r.issued_at)!;
      const signature = decodeBase64Any(r.signature as string);
      const message = Buffer.from(canonicalString(ctx.profile, 'signin', r), 'utf8');
      const keys = [resolved.publicKey, ...resolved.previousKeys.map((p) => p.publicKey)].filter((k) => keyValidAt(resolved.publicKey, resolved.previousKeys, k, issuedAt));
      const lax = signature !== undefined && keys.some((k) => opensslVerify(null, message, createPublicKey({ key: Buffer.concat([SPKI_PREFIX, k]), format: 'der', type: 'spki' }), signature));
      if (!lax) return verdict;
      await beforeNonce?.(r);
      const identity = String(r.identity).trim().toLowerCase();
      return {
        ok: true,
        identity,
        keyId: 'identity',
        delegated: false,
        requestId: r.request_id as string,
        action: r.action as string,
        scopes: Array.isArray(r.scopes) ? (r.scopes as string[]) : [],
        issuedAt,
        expiresAt: parseRfc3339(r.expires_at)!,
      };
    };
  }

  if (kind === 'signature-before-match') {
    // A verifier of its own with a fresh nonce cache per call: only to learn whether the signature holds.
    const probeResolver = resolver();
    const strict = ctx.verify;
    ctx.verify = async (response, beforeNonce) => {
      const probe = await createVerifier({ profile: ctx.profile, origin: ctx.config.origin, resolver: probeResolver, nonces: new MemoryNonceStore() })(response);
      if (!probe.ok && probe.rule >= 6) return probe; // refused before the match code is looked at
      return strict(response, beforeNonce);
    };
  }

  if (kind === 'long-statement') {
    const MARK = 'statement placeholder';
    let long: string | undefined;
    const insert = ctx.transactions.insert.bind(ctx.transactions);
    ctx.transactions.insert = (tx) => {
      if (long !== undefined && tx.request.statement === MARK) {
        tx.request.statement = long;
        tx.encoded = encodeObject(tx.request);
      }
      return insert(tx);
    };
    const fetch = rp.app.fetch;
    rp.app.fetch = async (req: Request) => {
      const url = new URL(req.url);
      if (url.pathname !== ctx.paths.login || req.method !== 'POST') return fetch(req);
      const body = (await req.json().catch(() => undefined)) as Record<string, unknown> | undefined;
      long = typeof body?.statement === 'string' && byteLength(body.statement) > limits.statement_max_bytes ? body.statement : undefined;
      const sent = long === undefined ? body : { ...body, statement: MARK };
      const res = await fetch(new Request(req.url, { method: 'POST', headers: req.headers, body: JSON.stringify(sent ?? {}) }));
      if (long === undefined || res.status !== 201) return res;
      const started = (await res.json()) as Record<string, unknown>;
      const decoded = decodeObject(started.request as string);
      if (decoded.ok) started.request = encodeObject({ ...decoded.value, statement: long });
      return new Response(JSON.stringify(started), { status: 201, headers: res.headers });
    };
  }

  if (kind === 'sloppy-body-cap') {
    const fetch = rp.app.fetch;
    rp.app.fetch = async (req: Request) => {
      const url = new URL(req.url);
      if (url.pathname !== ctx.paths.response || req.method !== 'POST') return fetch(req);
      let bytes: Uint8Array;
      try {
        bytes = await readBody(req, SLOPPY_CAP * 2, RP_BODY);
      } catch (error) {
        if (error instanceof HttpError) return errorJson(error);
        throw error;
      }
      return fetch(new Request(req.url, { method: 'POST', headers: req.headers, body: new Uint8Array(bytes) }));
    };
  }
  return rp;
}
