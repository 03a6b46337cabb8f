// vectors/ is committed output of `npm run vectors`: every file must match the bundled schema of
// its kind (schemas/json/vectors/<kind>.schema.json), cite only rule ids that exist, and be what
// the generator produces from fixtures/ today (`scripts/vectors.ts --check`).
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { makeAjv } from '../protocol/common/schema.ts';
import { rules } from '../schemas/ts/rules.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const vectorDir = join(root, 'vectors');
const files = existsSync(vectorDir)
  ? readdirSync(vectorDir)
      .filter((f) => f.endsWith('.json'))
      .sort()
  : [];
const ajv = makeAjv();
const ruleIds = new Set(rules.map((r) => r.id));
const validators = new Map<string, ValidateFunction>();
/** One compiled validator per kind (two files may share a kind: signin.json, signin-boundaries.json). */
function validatorFor(kind: string): ValidateFunction | undefined {
  const schemaFile = join(root, 'schemas/json/vectors', `${kind}.schema.json`);
  if (!existsSync(schemaFile)) return undefined;
  if (!validators.has(kind)) validators.set(kind, ajv.compile(JSON.parse(readFileSync(schemaFile, 'utf8')) as object));
  return validators.get(kind);
}

/** Every `rules` array anywhere in a file, with where it was found. */
function citedRules(node: unknown, path: string, out: Array<[string, string]>): Array<[string, string]> {
  if (Array.isArray(node)) node.forEach((v, i) => citedRules(v, `${path}/${i}`, out));
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'rules' && Array.isArray(v)) for (const id of v) out.push([`${path}/rules`, String(id)]);
      else citedRules(v, `${path}/${k}`, out);
    }
  }
  return out;
}

describe('vectors/', () => {
  it('holds the generated files', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  describe.each(files)('%s', (file) => {
    const data = JSON.parse(readFileSync(join(vectorDir, file), 'utf8')) as Record<string, unknown>;

    it('names its kind and profile', () => {
      expect(typeof data.kind).toBe('string');
      expect(typeof data.description).toBe('string');
      expect(data.profile).toBe('svc');
    });

    it('validates against its bundled schema', () => {
      const validate = validatorFor(String(data.kind));
      expect(validate, `no bundled schema schemas/json/vectors/${String(data.kind)}.schema.json`).toBeDefined();
      const ok = validate!(data);
      const errors = (validate!.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
      expect(ok, errors.join('\n')).toBe(true);
    });

    it('cites only rule ids of spec/rules/', () => {
      const unknown = citedRules(data, '', []).filter(([, id]) => !ruleIds.has(id));
      expect(unknown).toEqual([]);
    });
  });

  it('is fresh: `scripts/vectors.ts --check` exits 0', () => {
    const run = spawnSync('npx', ['tsx', 'scripts/vectors.ts', '--check'], { cwd: root, encoding: 'utf8' });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
  }, 60_000);
});
