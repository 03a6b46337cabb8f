// The deployed client's wire transcripts (../shared/interop/poweur/wire/, read where they lie):
// their rows, each exchange's path as a template, and what the client reads of each reply, parsed
// from the rows' `expected_reply_fields` prose ("METHOD path -> {field, optional?, list: [{item}]}").
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const WIRE_DIR = join(import.meta.dirname, '../../../../shared/interop/poweur/wire');
export const FILES = ['keystore', 'pairing', 'system-files', 'inbox-policy', 'groups', 'drive', 'messaging'] as const;
export type FileName = (typeof FILES)[number];

export interface WebAuthnBlock {
  field: 'assertion' | 'actor_assertion';
  rp_id_sent: string | null;
  challenge_form: string;
  authenticator_data: { rp_id_hash_is_sha256_of: string[] };
}

export interface Exchange {
  method: string;
  path: string;
  request_headers: Record<string, string>;
  request_body?: unknown;
  request_body_form?: string;
  status: number;
  reply_body?: unknown;
  webauthn?: WebAuthnBlock;
}

export interface Row {
  operation: string;
  poweur_function: string;
  exchanges: Exchange[];
  expected_reply_fields: string[];
  reference_answer_ok: boolean;
  note: string;
  mismatch?: { poweur: string; reference: string; document_3: string };
}

export const loadRows = (file: FileName): Row[] => JSON.parse(readFileSync(join(WIRE_DIR, `${file}.json`), 'utf8')) as Row[];

/** A path as a shape: every placeholder `{name}` or `{name:N}` as `{}`, the query dropped. */
export const shapeOf = (path: string): string => path.replace(/\?.*$/, '').replace(/\{[^}]*\}/g, '{}');

/** The text inside the brackets opening at `open`, and where it closes. */
function bracketed(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if ('{[('.includes(text[i]!)) depth++;
    if ('}])'.includes(text[i]!) && --depth === 0) return text.slice(open + 1, i);
  }
  return text.slice(open + 1);
}

/** Splits at the commas outside brackets. */
function items(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let at = 0;
  for (let i = 0; i < list.length; i++) {
    if ('{[('.includes(list[i]!)) depth++;
    if ('}])'.includes(list[i]!)) depth--;
    if (list[i] === ',' && depth === 0) {
      out.push(list.slice(at, i));
      at = i + 1;
    }
  }
  return [...out, list.slice(at)];
}

/** The required fields of `{a, b?, c: [{d, e?}]}`: a, c, c[].d. */
function fieldsOf(list: string): string[] {
  const out: string[] = [];
  for (const item of items(list)) {
    // `name?` and `name(s)?` are optional.
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)(?:\(s\))?(\?)?/.exec(item);
    if (!m || m[2]) continue;
    out.push(m[1]!);
    const nested = /^\s*:\s*\[\s*\{/.exec(item.slice(m[0].length));
    if (nested)
      out.push(
        ...fieldsOf(bracketed(item, m[0].length + nested[0].length - 1))
          .filter((f) => !f.includes('[]'))
          .map((f) => `${m[1]}[].${f}`),
      );
  }
  return out;
}

/** What the client reads of the reply to `method path`, per one line of expected_reply_fields (undefined when the line names no such exchange). */
function fieldsInLine(line: string, method: string, path: string): string[] | undefined {
  const calls = [...line.matchAll(/\b(GET|POST|PUT|DELETE) (\S+)/g)];
  for (const [i, call] of calls.entries()) {
    const named = shapeOf(call[2]!.replace(/\[.*$/, '').replace(/[);,.]+$/, ''));
    const mine = shapeOf(path);
    if (call[1] !== method || !(named === mine || (named.startsWith('...') && mine.endsWith(named.slice(3))))) continue;
    const segment = line.slice(call.index + call[0].length, calls[i + 1]?.index ?? line.length);
    const arrow = segment.indexOf('->');
    const from = arrow >= 0 ? arrow + 2 : 0;
    const tick = /^\s*`([a-z_]+)`/.exec(segment.slice(from));
    if (tick) return [tick[1]!];
    const open = segment.indexOf('{', from);
    return open >= 0 ? fieldsOf(bracketed(segment, open)) : [];
  }
  return undefined;
}

/** Every field the row says the client reads of the reply to `e`. */
export function expectedFields(row: Row, e: Exchange): string[] {
  const path = e.path === '' ? '' : e.path.replace(/\/undefined(\/|$)/, '/{node}$1');
  return [...new Set(row.expected_reply_fields.flatMap((line) => fieldsInLine(line, e.method, path) ?? []))];
}

/** The fields of `fields` that `body` lacks (`list[].item` checked on every item of a non-empty list). */
export function missingFields(body: unknown, fields: readonly string[]): string[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [...fields];
  const o = body as Record<string, unknown>;
  return fields.filter((f) => {
    const [list, item] = f.split('[].');
    if (item === undefined) return o[f] === undefined;
    const values = o[list!];
    return !Array.isArray(values) || values.some((v) => v === null || typeof v !== 'object' || (v as Record<string, unknown>)[item] === undefined);
  });
}
