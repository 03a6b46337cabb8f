// Every canonical string, built from the table in spec/signing.yaml (compiled once per profile
// and string, so the hot path is a handful of closures).
import { createHash, createHmac } from 'node:crypto';
import { signingSpec, type SignedStringName } from '../../schemas/ts/signing.ts';
import { fillTemplate, type Profile } from './profile.ts';
import { parseKey, formatKey, type KeyKind } from './keys.ts';
import { compareCodePoints } from './json.ts';

export class CanonicalError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

type Input = Readonly<Record<string, unknown>>;
type LineFn = (input: Input, out: string[]) => void;

interface LineSpec {
  literal?: string;
  field?: string;
  transform?: string;
  absent?: string;
  format?: string;
  each?: string;
}

function walk(input: Input, parts: readonly string[]): unknown {
  let value: unknown = input;
  for (const part of parts) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A reader of a dotted path, split once when a string is compiled (not on every build). */
function getter(path: string): (input: Input) => unknown {
  const parts = path.split('.');
  return parts.length === 1 ? (input) => input[path] : (input) => walk(input, parts);
}

function get(input: Input, path: string): unknown {
  return walk(input, path.split('.'));
}

function text(value: unknown, field: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new CanonicalError(field, `${field} must be a string`);
}

function fillFormat(format: string, lookup: (path: string) => unknown): string {
  return format.replace(/\{([^}]+)\}/g, (_m, path: string) => text(lookup(path), path));
}

function compileLine(line: LineSpec, name: string): LineFn {
  if (line.literal !== undefined) {
    const literal = fillTemplate(line.literal, name);
    return (_input, out) => void out.push(literal);
  }
  if (line.each !== undefined) {
    const path = line.each;
    const format = line.format!;
    const read = getter(path);
    return (input, out) => {
      const obj = read(input);
      if (obj === undefined || obj === null) return;
      if (typeof obj !== 'object' || Array.isArray(obj)) throw new CanonicalError(path, `${path} must be an object`);
      const keys = Object.keys(obj).sort(compareCodePoints);
      for (const key of keys) out.push(fillFormat(format, (p) => (p === 'key' ? key : p === 'value' ? (obj as Record<string, unknown>)[key] : undefined)));
    };
  }
  const field = fillTemplate(line.field!, name);
  const absent = line.absent ?? 'required';
  const transform = line.transform;
  const format = line.format;
  const read = getter(field);
  return (input, out) => {
    const raw = read(input);
    const missing = raw === undefined || raw === null || (absent === 'omit' && raw === '');
    if (missing) {
      if (absent === 'required') throw new CanonicalError(field, `${field} is required`);
      if (absent === 'empty') out.push('');
      return;
    }
    if (format !== undefined) {
      out.push(fillFormat(format, (p) => get(input, p)));
      return;
    }
    if (transform === 'lowercase-trim') out.push(text(raw, field).trim().toLowerCase());
    else if (transform === 'scope-list') {
      if (!Array.isArray(raw)) throw new CanonicalError(field, `${field} must be an array`);
      out.push(raw.map((s) => text(s, field)).join(','));
    } else out.push(text(raw, field));
  };
}

/** Compiled strings per profile name, then per string name (no key built per call). */
const compiled = new Map<string, Map<string, (input: Input) => string>>();

/** The canonical string `name` of spec/signing.yaml for this profile; throws CanonicalError. */
export function canonicalString(profile: Profile, name: SignedStringName, input: Input): string {
  let strings = compiled.get(profile.name);
  if (!strings) compiled.set(profile.name, (strings = new Map()));
  let build = strings.get(name);
  if (!build) {
    const spec = signingSpec.strings[name] as { lines?: readonly LineSpec[] };
    if (!spec.lines) throw new TypeError(`${name} is not a line-based string`);
    const fns = spec.lines.map((l) => compileLine(l, profile.name));
    const join = signingSpec.format.join;
    build = (input) => {
      const out: string[] = [];
      for (const fn of fns) fn(input, out);
      return out.join(join);
    };
    strings.set(name, build);
  }
  return build(input);
}

export function sha256(data: string | Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

/** ra.pairing.commitment */
export function pairingCommitment(profile: Profile, input: { ephemeral_public_key: string; commit_nonce: string }): string {
  return sha256(canonicalString(profile, 'pairing-commitment', input)).toString('base64url');
}

/** ra.pairing.sas: six digits from the first 8 digest bytes, big-endian, modulo 10^6. */
export function pairingSas(profile: Profile, input: { commitment: string; ephemeral_public_key: string; commit_nonce: string; approver_nonce: string }): string {
  const digest = sha256(canonicalString(profile, 'pairing-sas', input));
  return (digest.readBigUInt64BE(0) % 1_000_000n).toString().padStart(6, '0');
}

/** ra.key-fingerprint: four groups of five digits; undefined when the key does not parse. */
export function keyFingerprint(profile: Profile, key: string, kind: KeyKind): string | undefined {
  const bytes = parseKey(key, kind);
  if (!bytes) return undefined;
  const digest = sha256(canonicalString(profile, 'key-fingerprint', { key: formatKey(bytes, kind) }));
  const groups: string[] = [];
  for (let i = 0; i < 4; i++) groups.push((digest.readUIntBE(i * 5, 5) % 100_000).toString().padStart(5, '0'));
  return groups.join(' ');
}

/** ob.subject.pairwise: the OIDC `sub` for a sector. */
export function pairwiseSubject(profile: Profile, secret: Uint8Array, sector: string, identity: string): string {
  return createHmac('sha256', secret)
    .update(canonicalString(profile, 'pairwise-subject', { sector, identity }))
    .digest('base64url');
}
