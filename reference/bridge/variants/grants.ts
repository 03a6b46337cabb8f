// Deliberately broken transactions, consent and grants (hidden --break flags, only with
// SVC_REFERENCE_ALLOW_BREAKAGE=1), each breaking exactly one MUST of document 2. The request path
// keeps its correct code and asks these only "is this break on?".
import type { Verifier } from '../../../protocol/signin/verifier.ts';
import type { Resolver } from '../../../protocol/signin/resolver.ts';
import type { Profile } from '../../../protocol/common/profile.ts';
import { brokenVerifier, VERIFIER_VARIANTS } from '../../variants/verifier.ts';

type Breaks = { config: { breakage: ReadonlySet<string> } };
const on = (ctx: Breaks, name: string): boolean => (ctx.config.breakage as ReadonlySet<string>).has(name);

export const GRANT_BREAKAGES = [
  'state-dropped',
  'failed-stays-waiting',
  'native-signature-ignored',
  'first-party-all',
  'consent-unnamed',
  'email-released',
  'id-url-no-slash',
  'subject-public',
  'retired-key-dropped',
] as const;

/** state-dropped breaks ob.transaction.create: the transaction does not hold the request's state. */
export const heldState = (ctx: Breaks, state: string): string => (on(ctx, 'state-dropped') ? '' : state);

/** failed-stays-waiting breaks ob.transaction.failed: a verification error leaves the transaction waiting. */
export const failsTransaction = (ctx: Breaks): boolean => !on(ctx, 'failed-stays-waiting');

/** native-signature-ignored breaks ob.native.verifier: the bridge's verifier skips the signature (rule 7 of document 1). */
export function nativeVerifier(breakage: ReadonlySet<string>, verify: Verifier, resolver: Resolver, profile: Profile): Verifier {
  return breakage.has('native-signature-ignored') ? brokenVerifier(verify, VERIFIER_VARIANTS['ignore-signature']!.break, resolver, profile) : verify;
}

/** first-party-all breaks ob.consent.first-party: a first-party client skips consent for every scope. */
export const firstPartySkipsAll = (ctx: Breaks): boolean => on(ctx, 'first-party-all');

/** consent-unnamed breaks ob.consent.screen: the consent view names neither the client nor the return host. */
export function unnamedConsent<T extends { client_name: string; host: string }>(ctx: Breaks, consent: T): T {
  return on(ctx, 'consent-unnamed') ? { ...consent, client_name: '', host: '' } : consent;
}

/** email-released breaks ob.token.claims: an `email` claim is released beside svc_id. */
export const releasedEmail = (ctx: Breaks, identity: string): Record<string, string> => (on(ctx, 'email-released') ? { email: `me@${identity}` } : {});

/** id-url-no-slash breaks ob.id-input.projections: the profile URL projection loses its trailing slash. */
export const profileUrl = (ctx: Breaks, identity: string): string => (on(ctx, 'id-url-no-slash') ? `https://${identity}` : `https://${identity}/`);

/** subject-public breaks ob.subject.sector: `sub` is the service ID even when pairwise subjects are published. */
export const publicSubject = (ctx: Breaks): boolean => on(ctx, 'subject-public');

/** retired-key-dropped breaks ob.keys.rotation: a retired signing key leaves the key set at once. */
export const retiredKeyKeptMs = (breakage: ReadonlySet<string>, ms: number): number => (breakage.has('retired-key-dropped') ? 0 : ms);
