// Every identifier derived from the service name (spec/profile.yaml). `svc` is a placeholder: a
// deployment such as `poweur` gets `poweur_auth`, `X-Poweur-Identity`, `_poweur.<id>` and so on.
import { profileSpec, type IdentifierName } from '../../schemas/ts/profile.ts';

export interface Profile {
  readonly name: string;
  readonly ids: Readonly<Record<IdentifierName, string>>;
}

export class ProfileError extends Error {}

/** The service name a run, a server or a vector set uses unless told another (spec/profile.yaml `default_name`). */
export const DEFAULT_SERVICE_NAME: string = profileSpec.default_name;

const cache = new Map<string, Profile>();
const namePattern = new RegExp(profileSpec.name_pattern);

export function fillTemplate(template: string, name: string): string {
  const upper = name.toUpperCase();
  const capital = name.charAt(0).toUpperCase() + name.slice(1);
  return template.replaceAll('{name}', name).replaceAll('{Name}', capital).replaceAll('{NAME}', upper);
}

export function profileFor(name: string = DEFAULT_SERVICE_NAME): Profile {
  const hit = cache.get(name);
  if (hit) return hit;
  if (!namePattern.test(name)) {
    throw new ProfileError(`service name ${JSON.stringify(name)} must match ${profileSpec.name_pattern}`);
  }
  const ids = Object.fromEntries(Object.entries(profileSpec.identifiers).map(([key, def]) => [key, fillTemplate(def.template, name)])) as Record<IdentifierName, string>;
  const profile: Profile = Object.freeze({ name, ids: Object.freeze(ids) });
  cache.set(name, profile);
  return profile;
}

export const defaultProfile = profileFor();
