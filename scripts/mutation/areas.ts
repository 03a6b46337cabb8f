// The rule-enforcing modules of the reference that the mutation tool mutates (issue 25), each
// with the suite and the rules whose checks may kill its mutants: a mutant runs only the checks
// citing its area's rules, so it costs seconds, not a full suite. Only reference/ is mutated:
// protocol/ is shared with the harness, whose own signer and client would change with it.

export interface MutationArea {
  /** `npm run mutation -- <name>`. */
  name: string;
  suite: 'rp' | 'bridge' | 'relay' | 'drive';
  /** Files (or Stryker ranges `file:line:col-line:col`) whose mutants the area's checks judge. */
  mutate: string[];
  /**
   * Rule ids or prefixes (`--rule`): the checks citing them are the area's tests. Empty: the
   * whole suite, where it is short enough to run per mutant (the RP's, about 13 s).
   */
  rules: string[];
}

export const AREAS: readonly MutationArea[] = [
  // auth.ts also answers the codes of its refusals (ra.errors.*) and judges every owner route's headers.
  {
    name: 'relay-auth',
    suite: 'relay',
    mutate: ['reference/relay/auth.ts', 'reference/relay/sessions.ts'],
    rules: [
      'ra.auth',
      'ra.signed-request',
      'ra.sessions',
      'ra.challenge',
      'ra.devices',
      'ra.pickup.auth',
      // takeChallenge: the keystore fetch's claim of its challenge; endSessions: a removal's revoke_sessions.
      'ra.keystore.assertion-challenge',
      'ra.keystore.remove',
      'ra.errors.challenge-invalid',
      'ra.errors.signature-invalid',
      'ra.errors.request-expired',
      'ra.errors.request-replayed',
    ],
  },
  // messages.ts also enforces the recipient's inbox policy and a sign-in prompt's expiry (ra.inbox),
  // answers the codes of its refusals and of a failed forward (ra.errors.*), and refuses a revoked
  // session's proof.
  {
    name: 'relay-messages',
    suite: 'relay',
    mutate: ['reference/relay/messages.ts'],
    rules: [
      'ra.messages',
      'ra.relay',
      'ra.acks',
      'ra.seal',
      'ra.spool',
      'ra.pickup',
      'ra.inbox',
      'ra.errors.envelope',
      'ra.errors.invalid-request',
      'ra.errors.signature-invalid',
      'ra.errors.payload-too-large',
      'ra.errors.relay-unreachable',
      'ra.sessions.revoked-stays-revoked',
      'ra.events.stream',
      'ra.events.message-only',
      'ra.names.case',
    ],
  },
  // The seams' defaults are the reference's own answers in messages, system files and streams.
  {
    name: 'relay-seams',
    suite: 'relay',
    mutate: ['reference/relay/seams.ts'],
    rules: ['ra.messages', 'ra.relay', 'ra.acks', 'ra.inbox', 'ra.system', 'ra.events', 'ra.sessions.revoked-stays-revoked', 'ns.session-proof.relay-shared'],
  },
  { name: 'relay-inbox', suite: 'relay', mutate: ['reference/relay/inbox.ts'], rules: ['ra.pickup', 'ra.acks', 'ra.inbox', 'ra.spool', 'ra.messages', 'ra.events.stream', 'ra.events.max-streams'] },
  { name: 'relay-events', suite: 'relay', mutate: ['reference/relay/events.ts'], rules: ['ra.events', 'ra.pickup'] },
  // identities.ts also serves a hosted identity's public files (the group roster's, ra.system.group-roster)
  // and keeps the encryption key the relay-written identity record shows (ra.system.relay-written).
  {
    name: 'relay-identities',
    suite: 'relay',
    mutate: ['reference/relay/identities.ts'],
    rules: ['ra.identities', 'ra.signing', 'ra.names', 'ra.availability', 'ra.system.group-roster', 'ra.system.relay-written'],
  },
  // keystore.ts also checks its admin envelopes' signed lines, answers the project's codes of its
  // refusals, and ends sessions on a removal that asks it.
  {
    name: 'relay-keystore',
    suite: 'relay',
    mutate: ['reference/relay/keystore.ts'],
    rules: ['ra.keystore', 'ra.signing.keystore', 'ra.errors.keystore-unauthorized', 'ra.errors.recovery-master-required'],
  },
  { name: 'relay-pairing', suite: 'relay', mutate: ['reference/relay/pairing.ts'], rules: ['ra.pairing', 'ra.devices'] },
  { name: 'relay-system', suite: 'relay', mutate: ['reference/relay/system-files.ts'], rules: ['ra.system', 'ra.inbox', 'ra.groups'] },
  { name: 'drive-access', suite: 'drive', mutate: ['reference/relay/drive/access.ts', 'reference/relay/drive/groups.ts'], rules: ['ra.drive'] },
  { name: 'drive-commits', suite: 'drive', mutate: ['reference/relay/drive/commit.ts'], rules: ['ra.drive'] },
  { name: 'drive-handlers', suite: 'drive', mutate: ['reference/relay/drive/handlers.ts'], rules: ['ra.drive'] },
  // flow.ts also reuses a live session (ob.sso), turns a URL client whose document breaks a fetch
  // rule into an error page (ob.clients.url-fetch-*, ob.clients.url-document), and answers the
  // authorization error codes (ob.errors.authorize-codes).
  {
    name: 'bridge-authorize',
    suite: 'bridge',
    mutate: ['reference/bridge/flow.ts'],
    rules: [
      'ob.authorize',
      'ob.transaction',
      'ob.consent',
      'ob.code',
      'ob.native',
      'ob.push',
      'ob.sso',
      'ob.clients.url-fetch-https',
      'ob.clients.url-fetch-private',
      'ob.clients.url-fetch-no-redirect',
      'ob.clients.url-document',
      'ob.errors.authorize-codes',
      // The transaction's routes (lines 213 on): its status view and push contract, the ID typed, the session cookie, the consent page's claims.
      'ob.contract',
      'ob.id-input',
      'ob.cookies',
      'ob.profile',
      'ob.pages',
      // A sign-in begun before its client's suspension: its page and where it can go.
      'ob.clients.suspend',
    ],
  },
  // token.ts also reads the token side's forms and answers their codes (ob.errors.oauth-body), and
  // redeems IndieAuth's grants (ob.indieauth); a suspended client's tokens read nothing (ob.clients.suspend); it releases the profile claims (ob.profile.claims).
  {
    name: 'bridge-token',
    suite: 'bridge',
    mutate: ['reference/bridge/token.ts'],
    rules: ['ob.token', 'ob.code', 'ob.revoke', 'ob.introspect', 'ob.userinfo', 'ob.subject', 'ob.errors.oauth-body', 'ob.indieauth', 'ob.clients.suspend', 'ob.profile.claims'],
  },
  {
    name: 'bridge-clients',
    suite: 'bridge',
    mutate: ['reference/bridge/clients.ts', 'reference/bridge/url-clients.ts', 'reference/bridge/url-client-seams.ts'],
    // The URL client contract's pages (which rule refused a client, what each mode grants), the subject a client's sector (static or URL) decides, and the consent a static client's first_party skips.
    rules: [
      'ob.clients',
      'ob.authorize',
      'ob.token.client-auth',
      'ob.contract.url-client-refusals',
      'ob.contract.url-client-modes',
      'ob.subject.sector',
      'ob.subject.url-client-sector',
      'ob.consent.first-party',
    ],
  },
  // The bridge's defaults a broken variant replaces (reference/bridge/seams.ts): each one carries a rule of its own, so the whole suite judges them.
  { name: 'bridge-seams', suite: 'bridge', mutate: ['reference/bridge/seams.ts'], rules: [] },
  { name: 'rp-verification', suite: 'rp', mutate: ['reference/rp/delivery.ts', 'reference/rp/login.ts'], rules: [] },
  { name: 'rp-transactions', suite: 'rp', mutate: ['reference/rp/transactions.ts', 'reference/rp/poll.ts'], rules: [] },
];

export function area(name: string): MutationArea {
  const found = AREAS.find((a) => a.name === name);
  if (!found) throw new Error(`unknown area ${name} (known: ${AREAS.map((a) => a.name).join(', ')})`);
  return found;
}

/**
 * The command Stryker runs once per mutant: the area's checks against a fresh reference; non-zero
 * exit kills. `log` (absolute: Stryker runs it in its sandbox) receives which checks failed, by kind.
 */
export function killCommand(a: MutationArea, log: string): string {
  const rules = a.rules.map((r) => `--rule ${r}`).join(' ');
  return `node scripts/mutation/kill.mjs ${log} run --reference --suite ${a.suite} ${rules} --quiet --seed 7 --runs 10 --fuzz-runs 10 --timeout 60`;
}
