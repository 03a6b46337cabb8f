// The one body reader of the reference servers (RP, bridge, relay): every route reads its body
// here, with its cap from spec/limits and the rules its server names for "too large" and
// "malformed". An oversized body is read and discarded (up to body_drain_max_bytes) before the
// 413 is answered, so the client reads the answer rather than a reset connection; a JSON body
// nested deeper than json_depth_max is refused with 400 before anything parses or stores it.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { limits } from '../../schemas/ts/limits.ts';
import type { RuleId } from '../../schemas/ts/rules.ts';
import { HttpError, codeOf, type Code } from './errors.ts';

/** How a server names a refused body: the rule (and code) of its 413 and of its 400. */
export interface BodyRules {
  tooLarge: RuleId;
  malformed: RuleId;
  /** The envelope code of a 400 where the malformed rule has none of its own. */
  malformedCode?: Code;
}

export const RP_BODY: BodyRules = { tooLarge: 'ns.delivery.body-cap', malformed: 'ns.errors.malformed-body' };
export const RELAY_BODY: BodyRules = { tooLarge: 'ra.errors.payload-too-large', malformed: 'ra.errors.invalid-request' };
export const BRIDGE_BODY: BodyRules = { tooLarge: 'ns.delivery.body-cap', malformed: 'ob.robustness.never-500', malformedCode: 'invalid_request' };

export function tooLargeError(rules: BodyRules, max: number): HttpError {
  return new HttpError(413, codeOf(rules.tooLarge), `the body is larger than ${max} bytes`, rules.tooLarge, { connection: 'close' });
}

export function malformedError(rules: BodyRules, detail: string): HttpError {
  return new HttpError(400, rules.malformedCode ?? codeOf(rules.malformed), detail, rules.malformed);
}

/** The node request behind a web Request served by srvx (absent for a Request built in a test). */
function nodeRequestOf(req: Request): IncomingMessage | undefined {
  const node = (req as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;
  return node !== undefined && !req.bodyUsed ? node : undefined;
}

/**
 * Reads the whole body, at most `max` bytes, from a web Request or node's IncomingMessage: 413
 * (`rules.tooLarge`) over the cap, 400 (`rules.malformed`) for a broken upload or JSON nested
 * too deep. GET and HEAD have no body. `binary`: bytes never parsed as JSON (a drive chunk), not
 * judged by their brackets.
 */
export async function readBody(req: Request | IncomingMessage, max: number, rules: BodyRules, binary = false): Promise<Uint8Array> {
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return new Uint8Array(0);
  const web = typeof (req as Request).headers.get === 'function' ? (req as Request) : undefined;
  const node = web ? nodeRequestOf(web) : (req as IncomingMessage);
  const bytes = node !== undefined ? await readNode(node, max, rules) : await readWeb(web!, max, rules);
  if (!binary && jsonTooDeep(bytes, limits.json_depth_max)) throw malformedError(rules, `the JSON body is nested deeper than ${limits.json_depth_max} levels`);
  return bytes;
}

function declaredLength(value: string | null | undefined): number | undefined {
  return value !== null && value !== undefined && /^\s*\d+\s*$/.test(value) ? Number(value) : undefined;
}

/** node's request: past the cap, the rest is read and dropped, then 413 (beyond the drain bound, the connection is closed). */
function readNode(req: IncomingMessage, max: number, rules: BodyRules): Promise<Uint8Array> {
  const declared = declaredLength(req.headers['content-length']);
  if (declared !== undefined && declared > limits.body_drain_max_bytes) {
    req.resume();
    return Promise.reject(tooLargeError(rules, max));
  }
  if (req.readableEnded) return Promise.resolve(new Uint8Array(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      fn();
    };
    req.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > limits.body_drain_max_bytes) {
        settle(() => reject(tooLargeError(rules, max)));
        req.destroy();
      } else if (total <= max) chunks.push(chunk);
    });
    req.once('end', () => settle(() => (total > max ? reject(tooLargeError(rules, max)) : resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total)))));
    req.once('error', () => settle(() => reject(malformedError(rules, 'the request body could not be read'))));
    req.once('close', () => settle(() => reject(malformedError(rules, 'the request body ended early'))));
  });
}

/** A web stream (a Request built in-process): 413 by Content-Length, else while reading. */
async function readWeb(req: Request, max: number, rules: BodyRules): Promise<Uint8Array> {
  const declared = declaredLength(req.headers.get('content-length'));
  if (declared !== undefined && declared > max) throw tooLargeError(rules, max);
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > max) {
        await reader.cancel().catch(() => undefined);
        throw tooLargeError(rules, max);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw malformedError(rules, 'the request body could not be read');
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

const OPEN = new Set([0x5b, 0x7b]); // [ {
const CLOSE = new Set([0x5d, 0x7d]); // ] }

/**
 * True when `bytes`, read as JSON, nests arrays and objects deeper than `max`: one linear scan
 * outside strings, no recursion and no parse (brackets, quotes and backslashes are ASCII, never
 * part of a UTF-8 sequence). Only a body that starts as JSON (`{` or `[`) is judged.
 */
export function jsonTooDeep(bytes: Uint8Array | string, max: number = limits.json_depth_max): boolean {
  const b = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  let start = 0;
  while (start < b.length && (b[start] === 0x20 || b[start] === 0x09 || b[start] === 0x0a || b[start] === 0x0d)) start++;
  if (!OPEN.has(b[start] ?? 0)) return false;
  let depth = 0;
  let inString = false;
  for (let i = start; i < b.length; i++) {
    const c = b[i]!;
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (OPEN.has(c)) {
      if (++depth > max) return true;
    } else if (CLOSE.has(c)) depth--;
  }
  return false;
}

const digests = new WeakMap<Uint8Array, string>();

/**
 * The body's SHA-256, hex, computed once per body: a signed request's check and a handler that
 * names content by its hash (a drive chunk) both need it, and a chunk is up to 4 MiB.
 */
export function bodySha256(body: Uint8Array): string {
  let hex = digests.get(body);
  if (hex === undefined) digests.set(body, (hex = createHash('sha256').update(body).digest('hex')));
  return hex;
}
