// The RP's matrix variants (issue 25), each a bug an implementer ships, quoted beside the sentence
// of document 1 it breaks: a verifier whose signature leaves one line of the canonical string (or
// of the session proof) unbound, an identity normalized past "lowercased and trimmed", and a resume
// code spent by a read-then-write that two browsers' requests pass at once.
//
// An unbound line is one whose value the signature does not decide. A verifier cannot know the
// value an attacker signed, so the variant tries the values near the delivered one (another
// character at the end, a second either side, another member of a closed set): the checks swap
// each part for such a neighbour, itself a valid value, so this variant accepts exactly what a
// verifier blind to that line would.
import { formatRfc3339, parseRfc3339 } from '../../protocol/common/time.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { limits } from '../../schemas/ts/limits.ts';
import type { Input, VerifierVariant } from './verifier-kit.ts';
import type { WireVariant } from './kit.ts';

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Another last character, or one character more either side. */
function nearText(v: unknown): unknown[] {
  if (typeof v !== 'string' || v === '') return [];
  return [...[...B64URL].map((c) => v.slice(0, -1) + c), `x${v}`, `${v}x`].filter((x) => x !== v);
}

/** A few seconds either side, in the form the timestamp came in (seconds, Z). */
function nearTime(v: unknown): unknown[] {
  const t = parseRfc3339(v);
  if (t === undefined) return [];
  return [-3, -2, -1, 1, 2, 3].map((s) => formatRfc3339(t + s * 1000));
}

/** Every set of the vocabulary's scopes, sorted. */
function scopeSets(): unknown[] {
  const all = [...vocabulary.scopes.values].sort();
  return Array.from({ length: 2 ** all.length }, (_, bits) => all.filter((_s, i) => bits & (1 << i)));
}

/** The same origin under the other scheme, or with its default port spelled out. */
function nearOrigin(v: unknown): unknown[] {
  if (typeof v !== 'string') return [];
  return [v.replace(/^https:/, 'http:'), v.replace(/^http:/, 'https:'), `${v}:443`, `${v}:80`].filter((x) => x !== v);
}

const unbound = (field: string, line: string, near: (v: unknown) => unknown[]): VerifierVariant => ({
  rule: 'ns.verify.7',
  what: `the signature does not bind the ${line} line: a signature over another ${line} verifies`,
  break: { kind: 'unbound', field, near },
});

const proofUnbound = (field: string, near: (v: unknown) => unknown[]): VerifierVariant => ({
  rule: 'ns.session-proof.signed-lines',
  what: `the session proof's identity signature does not bind its ${field} line`,
  break: { kind: 'unbound-proof', field, near },
});

export const RP_MATRIX_VERIFIER_VARIANTS: Record<string, VerifierVariant> = {
  // "Lines joined with a line feed, no trailing line feed, signed as UTF-8 bytes" (document 1,
  // Canonical signing string): each of lines 3 to 12 is signed; a verifier that builds one of them
  // from anything but the delivered value, or leaves it out of the comparison, accepts a signature
  // made over another value ("each bound part swapped, one at a time, for another valid one").
  'unbound-identity': unbound('identity', 'identity', nearText),
  'unbound-audience': unbound('audience', 'audience', nearOrigin),
  'unbound-nonce': unbound('nonce', 'nonce', nearText),
  'unbound-request-id': unbound('request_id', 'request_id', nearText),
  'unbound-issued-at': unbound('issued_at', 'issued_at', nearTime),
  'unbound-expires-at': unbound('expires_at', 'expires_at', nearTime),
  'unbound-action': unbound('action', 'action', () => [...vocabulary.actions.values]),
  'unbound-scopes': unbound('scopes', 'scopes', scopeSets),
  'unbound-key-id': unbound('key_id', 'key_id', () => [vocabulary.key_ids.identity]),
  // "Signed lines (line-feed joined): the literal `session-registration`, `<identity>`,
  // `<session_public_key>`, `<issued_at>`, `<expires_at>`, `<nonce>`."
  'proof-unbound-session-key': proofUnbound('session_public_key', nearText),
  'proof-unbound-issued-at': proofUnbound('issued_at', nearTime),
  'proof-unbound-expires-at': proofUnbound('expires_at', nearTime),
  'proof-unbound-nonce': proofUnbound('nonce', nearText),
  // "the signer's service ID; lowercased and trimmed for signing" (Response object): a verifier
  // that strips every space, not only the surrounding ones, takes "alice .example" for
  // "alice.example" ("near-misses (a suffix, a prefix, another case)").
  'identity-spaces-stripped': {
    rule: 'ns.response.identity',
    what: 'the identity is normalized by removing every space, not trimmed',
    break: { kind: 'rewrite', edit: (r) => (typeof r.identity === 'string' ? { ...r, identity: r.identity.replace(/\s+/g, '') } : r) },
  },
};

// ---- limits and windows, each side ----

const bytes = (v: unknown) => Buffer.byteLength(typeof v === 'string' ? v : '', 'utf8');
const proofOf = (r: Input) => (typeof r.session_proof === 'object' && r.session_proof !== null ? (r.session_proof as Input) : {});
const span = (o: Input) => (parseRfc3339(o.expires_at) ?? 0) - (parseRfc3339(o.issued_at) ?? 0);
const DAY_MS = limits.session_ttl_max_seconds * 1000;

export const RP_LIMIT_VERIFIER_VARIANTS: Record<string, VerifierVariant> = {
  // "`statement` | at most 300 bytes, one line" (Limits): an off-by-one that refuses 300 bytes.
  'statement-cap-exclusive': {
    rule: 'ns.limits.statement',
    what: 'a statement of exactly 300 bytes is refused (the cap compared with <)',
    break: { kind: 'refuse', code: 'invalid_statement', when: (r) => bytes(r.statement) >= limits.statement_max_bytes },
  },
  // "validity window | at most 5 minutes" (Limits): an off-by-one that refuses a window of exactly 5 minutes.
  'window-cap-exclusive': {
    rule: 'ns.limits.window',
    restates: ['ns.verify.4'],
    what: 'a window of exactly 5 minutes is refused (the span compared with <)',
    break: { kind: 'refuse', code: 'window_too_long', when: (r) => span(r) >= limits.window_max_seconds * 1000 },
  },
  // "session TTL | at most 24 hours" (Limits) and "the 24-hour session TTL cap" (Session proof):
  // off by one either way.
  'proof-ttl-cap-exclusive': {
    rule: 'ns.session-proof.ttl',
    restates: ['ns.limits.session-ttl'],
    what: 'a session of exactly 24 hours is refused (the TTL compared with <)',
    break: { kind: 'refuse', code: 'session_proof_invalid', when: (r) => r.session_proof !== undefined && span(proofOf(r)) >= DAY_MS },
  },
  'proof-ttl-minutes': {
    rule: 'ns.session-proof.ttl',
    restates: ['ns.limits.session-ttl'],
    what: 'a session up to a minute past 24 hours is accepted (the TTL compared in whole minutes)',
    break: { kind: 'ignore', code: 'session_proof_invalid', detail: '(ns.session-proof.ttl)', when: (r) => span(proofOf(r)) < DAY_MS + 60_000 },
  },
  // "The proof is validated for ... expiry" (Session proof): a minute's leeway past expires_at.
  'proof-expiry-leeway': {
    rule: 'ns.session-proof.validation',
    what: 'a session proof is accepted up to a minute after its expires_at',
    break: { kind: 'ignore', code: 'session_proof_invalid', detail: 'the session has expired', when: (r) => Date.now() - (parseRfc3339(proofOf(r).expires_at) ?? 0) < 60_000 },
  },
};

// ---- the resume code spent by a read, a store round trip, then a write ----

/** How long the variant's read-then-write takes: the window in which concurrent resumes all read "unused". */
const ROUND_TRIP_MS = 150;

/**
 * "The resume code is still reusable in the same browser" (issue 25); "resume code valid and unused
 * AND binding cookie matches" (document 1, States and transitions; single-use, Limits): the
 * resume reads the code as unused, takes a store round trip, then marks it used, so every resume
 * of one code that arrives during that round trip signs the browser in. A resume after it is
 * refused, as the reference refuses it.
 */
function resumeReadThenWrite(resumePath: string): WireVariant['wire'] {
  const inFlight = new Map<string, Promise<{ status: number; headers: Headers; body: ArrayBuffer }>>();
  return async (req, next) => {
    const url = new URL(req.url);
    const code = url.searchParams.get('code');
    if (req.method !== 'GET' || url.pathname !== resumePath || code === null) return next(req);
    const first = inFlight.get(code);
    if (first) {
      const won = await first;
      if (won.status < 400) return new Response(won.body.slice(0), { status: won.status, headers: won.headers });
      return next(req);
    }
    const answer = (async () => {
      await new Promise((r) => setTimeout(r, ROUND_TRIP_MS));
      const res = await next(req);
      return { status: res.status, headers: new Headers(res.headers), body: await res.arrayBuffer() };
    })();
    inFlight.set(code, answer);
    try {
      const a = await answer;
      return new Response(a.body.slice(0), { status: a.status, headers: a.headers });
    } finally {
      inFlight.delete(code);
    }
  };
}

export function rpMatrixWire(resumePath: string): Record<string, WireVariant> {
  return {
    'resume-race': { rule: 'ns.limits.resume-code', what: 'concurrent resumes of one code all sign the browser in (read, round trip, write)', wire: resumeReadThenWrite(resumePath) },
  };
}
