// The targets file (`run --targets FILE`): the implementation under test, one entry per role,
// validated against spec/harness/targets.schema.json. JSON with // and /* */ comments, so the
// example `init` writes can explain itself.
import { readFile } from 'node:fs/promises';
import type { ValidateFunction } from 'ajv';
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import targetsSchema from '../../schemas/json/harness/targets.schema.json' with { type: 'json' };
import type { components } from '../../schemas/ts/harness.ts';
import { makeAjv } from '../../protocol/common/schema.ts';
import { ConfigError } from '../run/exit.ts';

type Schemas = components['schemas'];
/** What a role's entry may say about the run: every field optional (defaults live in the suites). */
export type RunSettings = Partial<Schemas['TargetsRun']>;
export type RpRole = Partial<Omit<Schemas['TargetsRp'], 'origin' | 'declared'>> & { origin: string; declared?: Partial<NonNullable<Schemas['TargetsRp']['declared']>> };

export interface Targets {
  service_name?: string;
  authority?: string;
  rp?: RpRole;
  bridge?: BridgeRole;
  relay?: RelayRole;
}

export type RelayRole = Partial<Omit<Schemas['TargetsRelay'], 'url'>> & { url: string };
export type BridgeRole = Partial<Omit<Schemas['TargetsBridge'], 'issuer' | 'clients'>> & Pick<Schemas['TargetsBridge'], 'issuer' | 'clients'>;

// Compiled on first use: every command loads this module, and most (the push command's `relay send`
// among them, started once per prompt) never read a targets file.
let compiled: ValidateFunction | undefined;
const validator = (): ValidateFunction => (compiled ??= makeAjv().compile(targetsSchema));

export async function readTargets(file: string): Promise<Targets> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read the targets file ${file}: ${(e as Error).message}`);
  }
  return parseTargets(text, file);
}

export function parseTargets(text: string, source = 'targets file'): Targets {
  const errors: ParseError[] = [];
  const data: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0]!;
    const line = text.slice(0, e.offset).split('\n').length;
    throw new ConfigError(`${source}:${line}: not valid JSON: ${printParseErrorCode(e.error)}`);
  }
  const validate = validator();
  if (!validate(data)) {
    const problems = (validate.errors ?? []).map(
      (e) =>
        `${e.instancePath || '(top)'} ${e.message}${e.params && 'unevaluatedProperty' in e.params ? ` (${String(e.params.unevaluatedProperty)})` : e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
    );
    throw new ConfigError(`${source} does not follow spec/harness/targets.schema.json:\n  ${problems.join('\n  ')}`);
  }
  return data as Targets;
}
