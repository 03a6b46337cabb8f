// What the reporters show of a check beyond its verdict: the HTTP exchanges its evidence kept
// (harness/actors/http.ts Exchange, wherever the suite's driver put them), the property failure's
// seed, counterexample and replay command, the rules' texts, and a `curl` line per request.
import type { Exchange } from '../actors/http.ts';
import type { PropertyEvidence } from '../run/property.ts';
import { shellQuote } from '../run/replay.ts';
import type { CheckResult, RuleEntry } from '../run/model.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isExchange(v: unknown): v is Exchange {
  return isObject(v) && typeof v.method === 'string' && typeof v.url === 'string' && isObject(v.requestHeaders) && isObject(v.headers);
}

/**
 * Every exchange in a result's evidence, in the order kept: the drivers keep them under
 * `exchanges`, a property under `evidence.exchanges`, a model run beside its commands; found by
 * shape wherever they are, so a suite's own evidence layout needs nothing here.
 */
export function exchangesOf(evidence: unknown): Exchange[] {
  const found: Exchange[] = [];
  const seen = new Set<unknown>();
  const walk = (v: unknown, depth: number): void => {
    if (depth > 6 || v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (isExchange(v)) return void found.push(v);
    for (const child of Array.isArray(v) ? v : Object.values(v)) walk(child, depth + 1);
  };
  walk(evidence, 0);
  return found;
}

/** The property failure's evidence (seed, path, shrunk counterexample, replay command), if the check is a property. */
export function propertyOf(evidence: unknown): PropertyEvidence | undefined {
  if (!isObject(evidence)) return undefined;
  const { seed, path, counterexample, replay } = evidence;
  return typeof seed === 'number' && typeof path === 'string' && typeof counterexample === 'string' && typeof replay === 'string' ? (evidence as unknown as PropertyEvidence) : undefined;
}

/** Notes the check left in its evidence (URLs it fell back on, and the like). */
export function notesOf(evidence: unknown): string[] {
  return isObject(evidence) && Array.isArray(evidence.notes) ? evidence.notes.filter((n): n is string => typeof n === 'string') : [];
}

/** The rules a result decides, with their text as the document states it (the catalogue's `text`). */
export function rulesOf(result: CheckResult, catalogue: readonly RuleEntry[]): Array<{ id: string; level: string; where: string; title: string; text?: string }> {
  const byId = new Map(catalogue.map((r) => [r.id, r]));
  return result.rules.map((id) => {
    const r = byId.get(id);
    if (!r) return { id, level: result.level, where: 'not in the catalogue', title: '' };
    const where = r.origin === 'project' ? `project decision (document ${r.doc}, ${r.section})` : `document ${r.doc}, ${r.section}`;
    return { id, level: r.level, where, title: r.title, ...(r.text !== undefined ? { text: r.text } : {}) };
  });
}

/** A one-line `HTTP/1.1 200` style summary of an exchange. */
export function exchangeLine(x: Exchange): string {
  const answer = x.status !== undefined ? String(x.status) : `no answer${x.error ? ` (${x.error})` : ''}`;
  return `${x.method} ${x.url} -> ${answer} in ${x.durationMs} ms`;
}

/** Request headers of a signed request (ra.signed-request): `X-<Name>-Signature`, `-Timestamp`, `-Nonce`. */
const SIGNED = /^x-[a-z0-9-]+-(signature|timestamp|nonce)$/i;

/** Headers curl sets itself or that would mislead when replayed by hand. */
const LEFT_TO_CURL = new Set(['content-length', 'host', 'connection', 'transfer-encoding']);

export interface Curl {
  command: string;
  /** What a reader must know before running it (stale signatures, a truncated body). */
  warnings: string[];
}

/**
 * A `curl` command line that sends the request again as the harness sent it: method, URL, every
 * header as sent (cookies and signed headers included), and the body. A signed request's
 * timestamp and nonce are stale by the time anyone replays it, and a body the evidence truncated
 * is not the one sent: the warnings say so.
 */
export function curlOf(x: Exchange): Curl {
  const parts = ['curl', '-i', '-X', x.method, shellQuote(x.url)];
  const warnings: string[] = [];
  const signed: string[] = [];
  for (const [name, value] of Object.entries(x.requestHeaders)) {
    if (LEFT_TO_CURL.has(name.toLowerCase())) continue;
    if (SIGNED.test(name)) signed.push(name);
    parts.push('-H', shellQuote(`${name}: ${value}`));
  }
  if (x.requestBody !== undefined) parts.push('--data-binary', shellQuote(x.requestBody));
  if (signed.length > 0) {
    warnings.push(
      `a signed request (${signed.join(', ')}): its timestamp and nonce are stale now, so the target should refuse this replay as too old or as a nonce already seen; sign the same request afresh to reproduce the original answer`,
    );
  } else if (x.requestBody !== undefined && /"signature"\s*:/.test(x.requestBody)) {
    warnings.push('the body carries a signature over a one-time request (its nonce and validity window are stale now): a replay tests the refusal of a replay, not the original answer');
  }
  if (x.requestTruncated) warnings.push('the evidence kept only the start of the request body: this command sends that start, not the whole body');
  if (x.requestHeaders.cookie !== undefined) warnings.push('the cookies are the ones the harness held then; a session they name may have ended since');
  return { command: parts.join(' '), warnings };
}

/** The exchange a failure is about: the last one a failure quoted (`judged`), else the last one the check made. */
export function failingExchange(exchanges: readonly Exchange[]): Exchange | undefined {
  return exchanges.findLast((x) => x.judged === true) ?? exchanges.at(-1);
}

/** A result a reader must act on: a gating failure or error, or a profile difference. */
export function needsAction(r: CheckResult): boolean {
  return r.status === 'error' || (r.status === 'failed' && r.expected !== 'failure');
}

/** The reason code or cause of a result, for every report (`failed: status`, `error: authority-late`). */
export function reasonOf(r: CheckResult): string | undefined {
  if (r.status === 'failed') return r.code;
  if (r.status === 'error') return r.cause;
  return undefined;
}
