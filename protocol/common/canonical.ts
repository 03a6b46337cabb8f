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
/** One line of a string (several, already joined, for an `each` line), or null when it is left out. */
type LineFn = (input: Input) => string | null;

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

function compileLine(line: LineSpec, name: string, join: string): LineFn {
  if (line.literal !== undefined) {
    const literal = fillTemplate(line.literal, name);
    return () => literal;
  }
  if (line.each !== undefined) {
    const path = line.each;
    const format = line.format!;
    const read = getter(path);
    return (input) => {
      const obj = read(input);
      if (obj === undefined || obj === null) return null;
      if (typeof obj !== 'object' || Array.isArray(obj)) throw new CanonicalError(path, `${path} must be an object`);
      const keys = Object.keys(obj).sort(compareCodePoints);
      if (keys.length === 0) return null;
      return keys.map((key) => fillFormat(format, (p) => (p === 'key' ? key : p === 'value' ? (obj as Record<string, unknown>)[key] : undefined))).join(join);
    };
  }
  const field = fillTemplate(line.field!, name);
  const absent = line.absent ?? 'required';
  const transform = line.transform;
  const format = line.format;
  const read = getter(field);
  return (input) => {
    const raw = read(input);
    const missing = raw === undefined || raw === null || (absent === 'omit' && raw === '');
    if (missing) {
      if (absent === 'required') throw new CanonicalError(field, `${field} is required`);
      return absent === 'empty' ? '' : null;
    }
    if (format !== undefined) return fillFormat(format, (p) => get(input, p));
    if (transform === 'lowercase-trim') return text(raw, field).trim().toLowerCase();
    if (transform === 'scope-list') {
      if (!Array.isArray(raw)) throw new CanonicalError(field, `${field} must be an array`);
      return raw.map((s) => text(s, field)).join(',');
    }
    return text(raw, field);
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
    const join = signingSpec.format.join;
    const fns = spec.lines.map((l) => compileLine(l, profile.name, join));
    // Concatenated as it goes: no array of lines per call (a verifier's hot path).
    build = (input) => {
      let out: string | undefined;
      for (const fn of fns) {
        const line = fn(input);
        if (line !== null) out = out === undefined ? line : out + join + line;
      }
      return out ?? '';
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
