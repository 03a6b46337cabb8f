// What an implementation answered, for checks and their failure texts: any JSON, the error code it
// sent if any, and `said()`: its status, its code and the start of its body.
import type { ErrorCode } from '../../schemas/ts/rules.ts';
import type { HttpResponse } from '../actors/http.ts';
import { CheckFailure, noteAnswer, noteMismatch } from './verdict.ts';

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function safeJson(r: HttpResponse): unknown {
  try {
    return JSON.parse(r.text());
  } catch {
    return undefined;
  }
}

/** The `error` string of a JSON answer, whatever else it carries. */
export function errorCode(r: HttpResponse): string | undefined {
  const b = safeJson(r);
  return isObject(b) && typeof b.error === 'string' ? b.error : undefined;
}

/**
 * True when the answer has this status and carries this catalogued error code in the error
 * envelope's `error` member (read with the JSON parser, never found by substring of the body).
 */
export function refusedWith(r: HttpResponse, status: number, code: ErrorCode): boolean {
  if (r.status !== status) noteMismatch('status');
  else if (errorCode(r) !== code) noteMismatch('code');
  else return true;
  return false;
}

/**
 * What the implementation answered, for failure texts: its status, its error code if any, and the
 * start of its body (so an RP with its own error shape, or none, still shows its reason).
 */
export function said(r: HttpResponse): string {
  noteAnswer(r.exchange);
  const code = errorCode(r);
  const text = r.text().replace(/\s+/g, ' ').trim();
  const body = text === '' ? 'an empty body' : JSON.stringify(text.length > 160 ? `${text.slice(0, 160)}…` : text);
  return `${r.status}${code !== undefined ? ` ${code}` : ''}${r.location ? ` to ${r.location}` : ''} (${body})`;
}

/**
 * True when the answer's status is in [low, high) (a 2xx: 200, 300; a refusal: 400, 500). When it
 * is not, the failure the check records next has the code `status` (verdict.ts noteMismatch).
 */
export function statusIn(r: HttpResponse, low: number, high: number): boolean {
  const ok = r.status >= low && r.status < high;
  if (!ok) noteMismatch('status');
  return ok;
}

/**
 * Fails the check when `r` is a 5xx: no request may get one, so a check that would skip for want of
 * what `what` should have given (a page, a banner, an option honoured) calls this first.
 */
export function failOnServerError(r: HttpResponse, what: string): void {
  if (r.status >= 500) throw new CheckFailure(`${what} answered ${said(r)}: no request may get a 5xx`);
}

/** Whether `actual` is the expected code, itself typed from the catalogue (a misspelt expectation does not compile). */
export function isCode(actual: string | undefined, expected: ErrorCode): boolean {
  return actual === expected;
}
