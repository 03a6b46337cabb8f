// Wire variants: a reference server broken one way on the wire, for `npm run sensitivity`. A variant
// wraps the server's web handler and edits what one request brings in or what one answer carries
// out, so the request path's own code stays as it is and is read first. Each names the one rule it
// breaks. Enabled only for the harness's own tests: SVC_REFERENCE_ALLOW_BREAKAGE=1 and
// SVC_REFERENCE_WIRE=<suite>/<name> (child processes), or passed to the listener (in-process RP).
// The same variable names a dialect (dialect.ts): the reference in the project's earlier forms.
// This module looks variants up (through index.ts, which imports every one), so it exports only the
// lookups: the variants' shape and helpers are in kit.ts, which a variant module imports.
import type { Wire } from './kit.ts';

export const WIRE_ENV = 'SVC_REFERENCE_WIRE';
const ALLOW_ENV = 'SVC_REFERENCE_ALLOW_BREAKAGE';

/** The wire variant named in the environment, or undefined; a name without the allow flag is refused. */
export async function wireFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<Wire | undefined> {
  const name = env[WIRE_ENV];
  if (name === undefined || name === '') return undefined;
  if (env[ALLOW_ENV] !== '1') throw new Error(`${WIRE_ENV} is for the harness's own tests (set ${ALLOW_ENV}=1)`);
  const { WIRE_VARIANTS } = await import('./index.ts');
  const { DIALECTS } = await import('./dialect.ts');
  const wire = WIRE_VARIANTS[name]?.wire ?? DIALECTS[name];
  if (!wire) throw new Error(`unknown ${WIRE_ENV} ${name} (known: ${[...Object.keys(WIRE_VARIANTS), ...Object.keys(DIALECTS)].join(', ')})`);
  return wire;
}

/** The seams of the wire variant named in the environment (none without one). */
export async function seamsFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<object> {
  if ((env[WIRE_ENV] ?? '') === '') return {};
  await wireFromEnv(env); // refuses a name without the allow flag, or an unknown one
  const { WIRE_VARIANTS } = await import('./index.ts');
  return WIRE_VARIANTS[env[WIRE_ENV]!]?.seams ?? {};
}
