// The `vectors` suite: every vector file in each directory, recognized by its `kind` field or its
// file name, validated against its schema (spec/vectors/), then checked vector by vector by the
// implementation under test and by the independent noble implementation.
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import type { Check, SuiteLoad } from '../../run/model.ts';
import { ConfigError } from '../../run/exit.ts';
import { profileFor, ProfileError } from '../../../protocol/common/profile.ts';
import { makeAjv } from '../../../protocol/common/schema.ts';
import { protocolCore, type Core } from './core.ts';
import { vectorCheck, type KindContext } from './check.ts';
import { signinChecks } from './kinds/signin.ts';
import { idInputChecks, namesChecks, audienceChecks, referenceChecks } from './kinds/identifiers.ts';
import { canonicalChecks, digestChecks } from './kinds/strings.ts';
import { fingerprintChecks, ed25519Checks, documentChecks, sessionProofChecks } from './kinds/keys.ts';
import { pairingChecks, encryptionChecks, profileChecks, requestChecks, contactsChecks, inboxPolicyChecks } from './kinds/payloads.ts';
import { driveChunkChecks, driveManifestChecks, driveRecordChecks } from './kinds/drive-content.ts';
import { driveSealChecks, driveNameChecks, driveShareChecks, groupChecks, groupKeyChecks, powChecks, powClampChecks } from './kinds/drive-keys.ts';
import { propertyChecks } from './properties.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const defaultVectorDir = join(ROOT, 'vectors');

/** Each kind: its checks, and the schema (schemas/json/vectors/) its files follow. */
const KINDS: Record<string, { checks: (kc: KindContext) => Check[]; schema: string; single?: boolean }> = {
  signin: { checks: signinChecks, schema: 'signin' },
  'signin-reference': { checks: referenceChecks, schema: 'signin-reference' },
  'id-input': { checks: idInputChecks, schema: 'id-input' },
  names: { checks: namesChecks, schema: 'names' },
  audience: { checks: audienceChecks, schema: 'audience' },
  canonical: { checks: canonicalChecks, schema: 'canonical' },
  digests: { checks: digestChecks, schema: 'digests' },
  documents: { checks: documentChecks, schema: 'documents' },
  fingerprints: { checks: fingerprintChecks, schema: 'fingerprints' },
  ed25519: { checks: ed25519Checks, schema: 'ed25519' },
  'session-proofs': { checks: sessionProofChecks, schema: 'session-proofs' },
  pairing: { checks: pairingChecks, schema: 'pairing' },
  encryption: { checks: encryptionChecks, schema: 'encryption' },
  'message-seal-v1': { checks: encryptionChecks, schema: 'message-seal-v1', single: true },
  profiles: { checks: profileChecks, schema: 'profiles' },
  requests: { checks: requestChecks, schema: 'requests' },
  contacts: { checks: contactsChecks, schema: 'contacts' },
  'inbox-policies': { checks: inboxPolicyChecks, schema: 'inbox-policies' },
  'drive-chunks': { checks: driveChunkChecks, schema: 'drive-chunks' },
  'drive-manifests': { checks: driveManifestChecks, schema: 'drive-manifests' },
  'drive-records': { checks: driveRecordChecks, schema: 'drive-records' },
  'drive-seals': { checks: driveSealChecks, schema: 'drive-seals' },
  'drive-names': { checks: driveNameChecks, schema: 'drive-names' },
  'drive-shares': { checks: driveShareChecks, schema: 'drive-shares' },
  groups: { checks: groupChecks, schema: 'groups' },
  'group-keys': { checks: groupKeyChecks, schema: 'group-keys' },
  pow: { checks: powChecks, schema: 'pow' },
  'pow-clamp': { checks: powClampChecks, schema: 'pow-clamp' },
};

export interface VectorSuiteOptions {
  dirs: string[];
  serviceName: string;
  /** The implementation under test; the protocol core unless a test injects another. */
  core?: Core;
}

const ajv = makeAjv();
const validators = new Map<string, ValidateFunction | null>();
function validatorFor(schema: string): ValidateFunction | null {
  if (!validators.has(schema)) {
    const file = join(ROOT, 'schemas/json/vectors', `${schema}.schema.json`);
    validators.set(schema, existsSync(file) ? ajv.compile(JSON.parse(readFileSync(file, 'utf8'))) : null);
  }
  return validators.get(schema)!;
}

export async function vectorSuite(options: VectorSuiteOptions): Promise<SuiteLoad> {
  let profile;
  try {
    profile = profileFor(options.serviceName);
  } catch (error) {
    if (error instanceof ProfileError) throw new ConfigError(error.message);
    throw error;
  }
  const core = options.core ?? protocolCore;
  const checks: Check[] = [];
  const skipped: SuiteLoad['skipped'] = [];
  const dirs = options.dirs.length > 0 ? options.dirs : [defaultVectorDir];

  for (const dir of dirs) {
    const abs = resolve(dir);
    if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new ConfigError(`vector directory ${dir} does not exist`);
    const label = basename(abs);
    const files = readdirSync(abs)
      .filter((f) => f.endsWith('.json'))
      .sort();
    if (files.length === 0) throw new ConfigError(`vector directory ${dir} has no .json files`);
    for (const name of files) {
      const source = `${label}/${name}`;
      let file: unknown;
      try {
        file = JSON.parse(readFileSync(join(abs, name), 'utf8'));
      } catch (error) {
        checks.push(vectorCheck({ profile, source, core, file: null }, 'parse', ['ns.version.vectors'], (e) => void e.that(false, `not JSON: ${(error as Error).message}`)));
        continue;
      }
      const declared = file !== null && typeof file === 'object' && !Array.isArray(file) ? (file as Record<string, unknown>) : {};
      const kindName = typeof declared.kind === 'string' ? declared.kind : basename(name, '.json');
      const kind = KINDS[kindName];
      if (!kind) {
        skipped.push({ source, reason: `no checker for kind "${kindName}"` });
        continue;
      }
      if (typeof declared.profile === 'string' && declared.profile !== profile.name) {
        skipped.push({ source, reason: `written for service name "${declared.profile}"; run with --service-name ${declared.profile}` });
        continue;
      }
      const kc: KindContext = { profile, source, core, file: kind.single ? [file] : file };
      const validate = validatorFor(kind.schema);
      if (validate) {
        checks.push(
          vectorCheck(kc, 'schema', ['ns.version.vectors'], (e) => {
            if (!validate(file)) e.that(false, `does not match spec/vectors/${kind.schema}.schema.json: ${ajv.errorsText(validate.errors)}`);
          }),
        );
      }
      checks.push(...kind.checks(kc));
    }
    checks.push(...propertyChecks(profile, core, `${label}/properties`));
  }
  return { checks, skipped, coverageDocs: [1] };
}
