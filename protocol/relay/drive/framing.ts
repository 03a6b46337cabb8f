// The drive's signing strings, interpreted from spec/drive.yaml `strings` (ra.drive.framing): a
// domain line then length-prefixed fields, or line-feed-joined lines. The table lists the fields;
// this only reads it.
import { driveSpec, type DriveStringName } from '../../../schemas/ts/drive.ts';
import { fillTemplate, type Profile } from '../../common/profile.ts';

type Item = Readonly<Record<string, unknown>> & { readonly items?: readonly Item[] };

const SEALED_PARTS = ['ephemeral_public_key', 'nonce', 'ciphertext'] as const;

export class DriveFormatError extends Error {}

/** A dot path into an object; `.` is the object itself, `@key` the key of a by-key entry. */
function at(value: unknown, path: string, key?: string): unknown {
  if (path === '.') return value;
  if (path === '@key') return key;
  let node = value;
  for (const part of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function text(value: unknown, what: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new DriveFormatError(`${what} must be a string`);
  return value;
}

function decimal(value: unknown, what: string): string {
  if (value === undefined || value === null) return '0';
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > driveSpec.format.max_counter) {
    throw new DriveFormatError(`${what} must be an integer from 0 to ${driveSpec.format.max_counter}`);
  }
  return String(value);
}

function transformed(value: string, transform: unknown): string {
  if (transform === 'lowercase') return value.toLowerCase();
  if (transform === 'lowercase-trim') return value.trim().toLowerCase();
  return value;
}

/** Code-point order, which is UTF-8 byte order (not UTF-16 code units). */
export const byCodePoint = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

function entries(value: unknown, byKey: boolean, what: string): { entry: unknown; key?: string }[] {
  if (value === undefined || value === null) return [];
  if (byKey) {
    if (typeof value !== 'object' || Array.isArray(value)) throw new DriveFormatError(`${what} must be an object`);
    return Object.keys(value)
      .sort(byCodePoint)
      .map((key) => ({ entry: (value as Record<string, unknown>)[key], key }));
  }
  if (!Array.isArray(value)) throw new DriveFormatError(`${what} must be a list`);
  return value.map((entry) => ({ entry }));
}

const truthy = (value: unknown): boolean => value === true || (Array.isArray(value) && value.length > 0);

/** The fields (for `lines`, the lines) that `items` make of `value`. */
function fields(profile: Profile, items: readonly Item[], value: unknown, lines: boolean, key?: string): string[] {
  const out: string[] = [];
  for (const item of items) {
    if ('literal' in item) out.push(fillTemplate(String(item.literal), profile.name));
    else if ('field' in item) out.push(transformed(text(at(value, String(item.field), key), String(item.field)), item.transform));
    else if ('number' in item) out.push(decimal(at(value, String(item.number)), String(item.number)));
    else if ('sealed' in item) {
      const sealed = at(value, String(item.sealed));
      for (const part of SEALED_PARTS) out.push(sealed === undefined || sealed === null ? '' : text(at(sealed, part), `${String(item.sealed)}.${part}`));
    } else if ('count' in item) {
      const list = at(value, String(item.count));
      out.push(String(entries(list, list !== null && typeof list === 'object' && !Array.isArray(list), String(item.count)).length));
    } else if ('list' in item) {
      const list = entries(at(value, String(item.list)), false, String(item.list)).map(({ entry }) => transformed(text(entry, String(item.list)), item.transform));
      out.push(list.sort(byCodePoint).join(String(item.join)));
    } else if ('each' in item) {
      for (const { entry, key: k } of entries(at(value, String(item.each)), item.by_key === true, String(item.each))) {
        const parts = fields(profile, item.items!, entry, lines, k);
        if (lines) out.push(parts.join(String(item.join ?? '')));
        else out.push(...parts);
      }
    } else if ('when' in item) {
      if (truthy(at(value, String(item.when)))) out.push(...fields(profile, item.items!, value, lines));
    } else throw new DriveFormatError(`unknown item ${JSON.stringify(item)}`);
  }
  return out;
}

/** Each field as its uint32 big-endian UTF-8 byte length, then the bytes. */
export function lengthPrefixed(parts: readonly string[]): Uint8Array {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const bytes = Buffer.from(part, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    chunks.push(length, bytes);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/** A template of spec/drive.yaml with the service name, as a line: `svc/drive/page/v1` LF. */
export const domainLine = (profile: Profile, template: string): Buffer => Buffer.from(`${fillTemplate(template, profile.name)}\n`, 'utf8');

/** The bytes `name` (spec/drive.yaml strings) signs or hashes for `object`; DriveFormatError when a field has the wrong type. */
export function driveString(profile: Profile, name: DriveStringName, object: unknown): Uint8Array {
  const spec = driveSpec.strings[name] as { framing: string; domain?: string; items: readonly Item[] };
  if (spec.framing === 'lines') return new Uint8Array(Buffer.from(fields(profile, spec.items, object, true).join('\n'), 'utf8'));
  return new Uint8Array(Buffer.concat([domainLine(profile, spec.domain!), lengthPrefixed(fields(profile, spec.items, object, false))]));
}
