// The WebAuthn RP ids a keystore assertion may name (document 3, Keystore: "the identity itself,
// or its registrable domain when hosted"). The registrable domain is read from the public suffix
// list (tldts, private entries included, as browsers read it), never from a hand-written list:
// for `x.a.relay.test` it is `relay.test`, which differs from the hosting relay's `a.relay.test`.
import { getDomain } from 'tldts';

/** The registrable domain of `name` (eTLD+1 by the public suffix list), or undefined when it has none. */
export function registrableDomain(name: string): string | undefined {
  const domain = getDomain(name.toLowerCase(), { allowPrivateDomains: true });
  return domain ?? undefined;
}

/** The RP ids acceptable for `identity`: itself, and its registrable domain when it is hosted. */
export function acceptableRpIds(identity: string, hosted: boolean): string[] {
  const domain = hosted ? registrableDomain(identity) : undefined;
  return domain && domain !== identity ? [identity, domain] : [identity];
}
