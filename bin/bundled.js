// Loads a TypeScript entry from a bundle esbuild made of the sources as they are now, made again
// whenever one of them changes, and through tsx when no bundle can be made. tsx compiles each
// module through loader hooks on another thread: a reference server spent about 2.2 s of CPU to
// start that way, 1.1 s from the bundle, and a run starts dozens of them (docs/performance.md).
//
// The bundle sits under node_modules/.cache (bare imports stay imports of node_modules), in a
// folder named for the entry and the project's directory, beside a list of its inputs with their
// sizes and times: a start stats them, and builds again when one differs. Each module keeps its own
// import.meta.url, so a path made from it still points into the sources. Stack traces name the
// bundle's lines unless node runs with --enable-source-maps (NODE_OPTIONS; it costs a start
// 0.15 s); SVC_NO_BUNDLE=1 runs the sources through tsx.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CACHE = join(ROOT, 'node_modules', '.cache', 'svc-conformance');

/** Imports `entry` (relative to the project) from a fresh bundle, or through tsx. */
export async function runBundled(entry) {
  const bundle = process.env.SVC_NO_BUNDLE ? undefined : await fresh(entry).catch(() => undefined);
  if (bundle) return import(pathToFileURL(bundle).href);
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(join(ROOT, entry)).href);
}

const stamp = (file) => {
  const s = statSync(file);
  return `${s.size}:${s.mtimeMs}`;
};

async function fresh(entry) {
  const dir = join(CACHE, `${entry.replace(/[^a-z0-9]+/gi, '-')}-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}`);
  const main = join(dir, 'entry.mjs');
  const inputs = join(dir, 'inputs.json');
  try {
    const seen = JSON.parse(readFileSync(inputs, 'utf8'));
    if (seen.node === process.version && Object.entries(seen.files).every(([file, s]) => stamp(join(ROOT, file)) === s)) return main;
  } catch {
    // no bundle yet, or one of its inputs is gone: build
  }
  const { build } = await import('esbuild');
  // Split: what an entry imports only when asked (a command of the harness's CLI) stays a chunk of its own.
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { entry: join(ROOT, entry) },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    packages: 'external',
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    sourcemap: 'linked',
    metafile: true,
    write: false,
    logLevel: 'silent',
    plugins: [ownImportMetaUrl],
  });
  const files = {};
  for (const file of Object.keys(result.metafile.inputs)) files[file] = stamp(join(ROOT, file));
  mkdirSync(dir, { recursive: true });
  // Each file renamed into place, the entry and the list last: processes started at once may each
  // build, and none reads half a file or a list newer than its bundle. Chunks are named by their
  // content, so a process still running an older entry keeps the chunks it imports later.
  const place = (file, contents) => {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, contents);
    renameSync(tmp, file);
  };
  const last = (f) => (f.path === main || f.path === `${main}.map` ? 1 : 0);
  for (const f of [...result.outputFiles].sort((x, y) => last(x) - last(y))) place(f.path, f.contents);
  place(inputs, JSON.stringify({ node: process.version, files }));
  return main;
}

/** Gives each project module its own import.meta.url (a bundle would give every one the bundle's). */
const ownImportMetaUrl = {
  name: 'own-import-meta-url',
  setup(b) {
    // Only the project's own files come here: packages stay external.
    b.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
    });
  },
};
