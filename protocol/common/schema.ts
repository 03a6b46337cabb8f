// One configured JSON Schema 2020-12 validator for the whole kit (spec lint, vectors, servers).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { defaultProfile, type Profile } from './profile.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
type AddFormats = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

export function makeAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  addFormats(ajv);
  // Annotations the spec carries for people and for the harness's coverage table.
  ajv.addKeyword({ keyword: 'x-rules' });
  ajv.addKeyword({ keyword: 'x-origin' });
  return ajv;
}

/**
 * The JSON Schemas spell the service's fields with the default name (`svc_auth`); an object built
 * under another profile (`poweur_auth`) is renamed back before it is validated.
 */
export function inSchemaNames(profile: Profile, value: unknown): unknown {
  const field = profile.ids.auth_field;
  const schemaField = defaultProfile.ids.auth_field;
  if (field === schemaField || value === null || typeof value !== 'object' || Array.isArray(value) || !(field in value)) return value;
  const { [field]: version, ...rest } = value as Record<string, unknown>;
  return { [schemaField]: version, ...rest };
}
