// Near-misses of a redirect URI (document 2, OIDC profile rule 4: "`redirect_uri` is an exact
// string match"): each form differs from the registered URI in one way an implementer's loose
// comparison lets through (startsWith, a normalised trailing slash or case, an ignored port).
// The loopback any-port exception (RFC 8252) makes `port` no near-miss for a public client's
// loopback redirect: `loopbackPublic` leaves it out.

export type NearMiss = 'suffix' | 'segment' | 'prefix' | 'trailing-slash' | 'case' | 'port';

export function nearMisses(registered: string, options: { loopbackPublic?: boolean } = {}): Array<{ form: NearMiss; uri: string }> {
  const u = new URL(registered);
  const path = u.pathname;
  const base = `${u.protocol}//${u.host}`;
  const out: Array<{ form: NearMiss; uri: string }> = [
    { form: 'suffix', uri: `${registered}x` },
    { form: 'segment', uri: `${base}${path.replace(/\/?$/, '/')}next${u.search}` },
    // One character short: the registered URI extends it.
    { form: 'prefix', uri: registered.slice(0, -1) },
    { form: 'trailing-slash', uri: path.endsWith('/') ? `${base}${path.slice(0, -1)}${u.search}` : `${base}${path}/${u.search}` },
    { form: 'case', uri: `${base}${path.toUpperCase() === path ? path.toLowerCase() : path.toUpperCase()}${u.search}` },
  ];
  // (URL.hostname keeps an IPv6 literal's brackets.)
  if (!options.loopbackPublic) out.push({ form: 'port', uri: `${u.protocol}//${u.hostname}:${Number(u.port || (u.protocol === 'https:' ? 443 : 80)) + 7}${path}${u.search}` });
  return out.filter((m) => m.uri !== registered);
}
