// Manifest shape beyond its schema (ra.drive.manifest-shape) and its pages (ra.drive.manifest-pages):
// what each operation carries, public nodes, and pages that are exactly the manifest's content.
import { limits } from '../../../schemas/ts/limits.ts';
import type { Profile } from '../../common/profile.ts';
import { driveHash } from './sign.ts';
import { normalizeName } from './names.ts';

type Obj = Record<string, unknown>;
const has = (o: Obj, k: string) => o[k] !== undefined && o[k] !== null && o[k] !== '';

function contentProblems(m: Obj): string[] {
  const problems: string[] = [];
  const pages = Array.isArray(m.pages) ? m.pages.length : -1;
  const count = Number(m.count);
  const size = limits.drive_page_max_refs;
  if (pages < 0 || (pages === 0 && count !== 0) || (pages > 0 && (count <= (pages - 1) * size || count > pages * size))) problems.push('the page list does not match the chunk count');
  if (m.kind === 'folder' && (has(m, 'mode') || has(m, 'content_key') || count !== 0)) problems.push('a folder has no mode, content key or content');
  if (m.kind === 'file' && m.mode !== 'replace' && m.mode !== 'append') problems.push("a file's mode is replace or append");
  if (has(m, 'folder') && m.folder === m.node) problems.push('a node cannot contain itself');
  if (has(m, 'parent') && m.parent === m.version) problems.push('a version cannot be its own parent');
  return problems;
}

/** Public nodes sign their name (and a file its content key) in clear instead of sealing them. */
function publicProblems(m: Obj): string[] {
  if (m.public !== true) return has(m, 'plain_name') || has(m, 'plain_key') ? ['plain_name and plain_key belong to public nodes'] : [];
  const problems: string[] = [];
  if (has(m, 'name') || has(m, 'content_key')) problems.push('a public node carries its name and content key in clear, not sealed');
  if (has(m, 'plain_name') && normalizeName(String(m.plain_name)) !== m.plain_name) problems.push('plain_name is not a valid NFC name');
  if (has(m, 'plain_key') && m.kind !== 'file') problems.push('only a public file has a plain content key');
  return problems;
}

/** What is wrong with a manifest's operation and content beyond its schema; empty when nothing. */
export function manifestProblems(m: Obj): string[] {
  const problems = [...contentProblems(m), ...publicProblems(m)];
  const named = has(m, 'name') || has(m, 'plain_name');
  if (named !== has(m, 'name_hash')) problems.push('a name and its name_hash go together');
  const clear = m.public === true;
  const rules: Record<string, () => boolean> = {
    create: () => !has(m, 'parent') && (clear || has(m, 'node_key')) && has(m, 'folder') === named && (m.kind !== 'file' || has(m, 'content_key') || (clear && has(m, 'plain_key'))),
    replace: () => has(m, 'parent') && m.kind === 'file' && !named && !has(m, 'node_key') && !has(m, 'content_key') && !has(m, 'folder'),
    move: () => has(m, 'parent') && has(m, 'folder') && named && has(m, 'node_key') && !has(m, 'content_key'),
    rotate: () => has(m, 'parent') && !named && !has(m, 'folder') && has(m, 'node_key') && (m.kind === 'file') === has(m, 'content_key'),
    remove: () => has(m, 'parent') && !named && !has(m, 'folder') && !has(m, 'node_key') && !has(m, 'content_key') && Number(m.count) === 0,
  };
  const rule = rules[String(m.operation)];
  if (!rule) problems.push(`unknown operation ${String(m.operation)}`);
  else if (!rule()) problems.push(`the fields do not fit a ${String(m.operation)}`);
  return problems;
}

export type PagesResult = { ok: true; chunks: Obj[] } | { ok: false; reason: string };

/** The manifest's pages checked in order (drive, node, hashes, total count); the ordered references. */
export function verifyPages(profile: Profile, manifest: Obj, pages: readonly Obj[]): PagesResult {
  const hashes = Array.isArray(manifest.pages) ? (manifest.pages as unknown[]) : [];
  if (pages.length !== hashes.length) return { ok: false, reason: 'page count does not match the manifest' };
  const chunks: Obj[] = [];
  for (const [i, page] of pages.entries()) {
    if (page.drive !== manifest.drive || page.node !== manifest.node) return { ok: false, reason: `page ${i} belongs to another node` };
    const refs = Array.isArray(page.chunks) ? (page.chunks as Obj[]) : [];
    if (refs.length === 0 || refs.length > limits.drive_page_max_refs) return { ok: false, reason: `page ${i} holds 1 to ${limits.drive_page_max_refs} references` };
    if (driveHash(profile, 'page', page) !== hashes[i]) return { ok: false, reason: `page ${i} does not match the manifest` };
    chunks.push(...refs);
  }
  return chunks.length === manifest.count ? { ok: true, chunks } : { ok: false, reason: 'chunk count does not match the manifest' };
}
