// Part of `npm run check`: every JSON Schema compiles under strict Ajv (spec sources with their
// cross-file references, and each generated standalone bundle on its own), and every rule id a
// schema cites exists.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeAjv } from '../protocol/common/schema.ts';
import { rules } from '../schemas/ts/rules.ts';
import { root } from './lib/outputs.ts';

const known = new Set(rules.map((r) => r.id));
const problems: string[] = [];
let count = 0;

const files = (dir: string) =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith('.schema.json'))
    .map((f) => join(dir, f));
const load = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8')) as Record<string, unknown>;

function citedRules(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const n of node) citedRules(n, out);
  } else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'x-rules' && Array.isArray(v)) out.push(...(v as string[]));
      else citedRules(v, out);
    }
  }
  return out;
}

for (const group of ['spec/objects', 'spec/vectors', 'spec/harness', 'spec/meta']) {
  const ajv = makeAjv();
  const sources = files(group);
  // Vector schemas may name protocol objects (`../objects/x.schema.json`).
  for (const f of [...sources, ...(group === 'spec/vectors' ? files('spec/objects') : [])]) ajv.addSchema(load(f));
  for (const f of sources) {
    count++;
    try {
      ajv.getSchema(String(load(f).$id));
    } catch (error) {
      problems.push(`${f}: ${(error as Error).message}`);
    }
    for (const id of citedRules(load(f))) if (!known.has(id)) problems.push(`${f}: x-rules cites unknown rule ${id}`);
  }
}
for (const group of ['schemas/json/objects', 'schemas/json/vectors', 'schemas/json/harness']) {
  for (const f of files(group)) {
    count++;
    try {
      makeAjv().compile(load(f));
    } catch (error) {
      problems.push(`${f}: ${(error as Error).message}`);
    }
  }
}
if (problems.length > 0) {
  process.stderr.write(`schema lint: ${problems.length} problem(s)\n  ${problems.join('\n  ')}\n`);
  process.exitCode = 1;
} else {
  process.stdout.write(`schema lint: ${count} schemas compile, every cited rule exists\n`);
}
