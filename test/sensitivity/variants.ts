// The broken variants of the reference servers, each with the one rule it breaks: `npm run
// sensitivity` runs each against only the checks citing that rule, and a rule counts as proven
// when one of those checks fails. The variants live beside the code they break (hidden --break
// flags of the relay and the bridge, wrappers of the RP in test/rp/helpers.ts).
import type { RuleId } from '../../schemas/ts/rules.ts';
import type { Breakage as RpBreakage } from '../rp/helpers.ts';
import { RP_WIRE } from '../../reference/variants/rp.ts';
import { BRIDGE_WIRE } from '../../reference/variants/bridge.ts';
import { BRIDGE_MATRIX_WIRE } from '../../reference/variants/bridge-matrix.ts';
import { RELAY_WIRE } from '../../reference/variants/relay.ts';
import { DRIVE_WIRE } from '../../reference/variants/drive.ts';
import { DRIVE_MATRIX_WIRE } from '../../reference/variants/drive-matrix.ts';
import { RELAY_OWNER_WIRE } from '../../reference/variants/relay-owner.ts';
import { RELAY_CORE_WIRE } from '../../reference/variants/relay-core.ts';
import { RELAY_SESSIONS_WIRE } from '../../reference/variants/relay-sessions.ts';
import type { WireVariant } from '../../reference/variants/wire.ts';
import { VERIFIER_VARIANTS } from '../../reference/variants/verifier.ts';

/**
 * `tls`: the variant is started on a name the test authority resolves, with its certificate, and
 * judged there: the rules of https (an http audience off development, `__Host-` cookies) show
 * only off loopback http, where the documents allow what they forbid elsewhere.
 */
export type Variant =
  | { suite: 'relay'; breakage: string; rule: RuleId }
  | { suite: 'drive'; breakage: string; rule: RuleId }
  | { suite: 'bridge'; breakage: string; rule: RuleId; tls?: true }
  | { suite: 'rp'; breakage: RpBreakage; rule: RuleId; tls?: true };

/** One variant per rule a wire variant breaks (its rule and the rules restating it). */
function wire(suite: 'rp' | 'bridge' | 'relay' | 'drive', table: Record<string, WireVariant>): Variant[] {
  return Object.entries(table).flatMap(([name, v]) => [v.rule, ...(v.restates ?? [])].map((rule): Variant => ({ suite, breakage: `wire:${name}`, rule }) as Variant));
}

export const VARIANTS: readonly Variant[] = [
  { suite: 'relay', breakage: 'verify-after-store', rule: 'ra.relay.verify-before-store' },
  { suite: 'relay', breakage: 'ack-unsigned', rule: 'ra.acks.signature' },
  { suite: 'relay', breakage: 'challenge-reuse', rule: 'ra.auth.challenge-single-use' },
  { suite: 'relay', breakage: 'challenge-race', rule: 'ra.auth.challenge-single-use' },
  { suite: 'relay', breakage: 'neither-local', rule: 'ra.relay.locality' },
  { suite: 'relay', breakage: 'spool-memory', rule: 'ra.spool.durable' },
  { suite: 'relay', breakage: 'id-drop', rule: 'ra.messages.accepted' },
  { suite: 'relay', breakage: 'revoked-proof', rule: 'ra.sessions.revoked-stays-revoked' },
  { suite: 'relay', breakage: 'surrogate-500', rule: 'ra.errors.listed-statuses' },
  { suite: 'relay', breakage: 'spool-forever', rule: 'ra.spool.expiry' },
  { suite: 'relay', breakage: 'proof-expiry-ignored', rule: 'ns.session-proof.relay-shared' },
  { suite: 'relay', breakage: 'sessions-persisted', rule: 'ra.sessions.memory' },
  { suite: 'relay', breakage: 'events-replay', rule: 'ra.events.no-replay' },
  { suite: 'relay', breakage: 'pairing-forever', rule: 'ra.pairing.expiry' },
  { suite: 'relay', breakage: 'auth-request-untrusted', rule: 'ob.push.trusted' },
  { suite: 'relay', breakage: 'auth-request-untrusted', rule: 'ra.inbox.auth-request' },
  { suite: 'relay', breakage: 'relay-written-writable', rule: 'ra.system.relay-written' },
  { suite: 'relay', breakage: 'roster-unverified', rule: 'ra.system.group-roster' },
  { suite: 'drive', breakage: 'drive-unauthenticated', rule: 'ra.drive.owner' },
  { suite: 'drive', breakage: 'read-can-write', rule: 'ra.drive.members' },
  { suite: 'drive', breakage: 'remote-members-refused', rule: 'ra.drive.remote-members' },
  { suite: 'drive', breakage: 'group-roster-ignored', rule: 'ra.drive.group-members' },
  { suite: 'drive', breakage: 'group-members-refused', rule: 'ra.drive.group-members' },
  { suite: 'drive', breakage: 'group-roster-stale', rule: 'ra.drive.group-roster-check' },
  { suite: 'drive', breakage: 'stale-base-accepted', rule: 'ra.drive.stale-base' },
  { suite: 'drive', breakage: 'changes-skip', rule: 'ra.drive.changes' },
  { suite: 'drive', breakage: 'events-unfiltered', rule: 'ra.drive.events' },
  { suite: 'drive', breakage: 'revoked-stream-open', rule: 'ra.drive.events-revocation' },
  { suite: 'drive', breakage: 'links-authenticated', rule: 'ra.drive.links' },
  { suite: 'drive', breakage: 'link-verifier-ignored', rule: 'ra.drive.link-auth' },
  { suite: 'drive', breakage: 'missing-lists-stored', rule: 'ra.drive.missing' },
  { suite: 'drive', breakage: 'chunk-bytes-altered', rule: 'ra.drive.versions' },
  { suite: 'drive', breakage: 'children-empty', rule: 'ra.drive.nodes' },
  { suite: 'drive', breakage: 'shares-empty', rule: 'ra.drive.shares-list' },
  { suite: 'drive', breakage: 'node-shares-no-ancestors', rule: 'ra.drive.node-shares' },
  { suite: 'drive', breakage: 'root-no-root', rule: 'ra.drive.root' },
  { suite: 'drive', breakage: 'chunk-by-hash', rule: 'ra.drive.chunk-access' },
  // "a chunk readable by hash through a share that does not cover it" (issue 25): a member reads a
  // chunk of a node it has no share on through the route of one it has.
  { suite: 'drive', breakage: 'chunk-by-hash', rule: 'ra.drive.members' },
  { suite: 'drive', breakage: 'link-opens-ignored', rule: 'ra.drive.link-opens' },
  { suite: 'drive', breakage: 'commit-half-applied', rule: 'ra.drive.commit-validated' },
  { suite: 'drive', breakage: 'share-no-inherit', rule: 'ra.drive.roles' },
  { suite: 'bridge', breakage: 'pkce', rule: 'ob.authorize.pkce-required' },
  { suite: 'bridge', breakage: 'redirect-prefix', rule: 'ob.authorize.redirect-exact' },
  { suite: 'bridge', breakage: 'code-reuse', rule: 'ob.code.replay-revokes' },
  { suite: 'bridge', breakage: 'iss', rule: 'ob.authorize.iss' },
  { suite: 'bridge', breakage: 'consent', rule: 'ob.consent.release' },
  { suite: 'bridge', breakage: 'url-client-private', rule: 'ob.clients.url-fetch-private' },
  { suite: 'bridge', breakage: 'identify-url-500', rule: 'ob.robustness.never-500' },
  { suite: 'bridge', breakage: 'token-redirect-omitted', rule: 'ob.code.binding' },
  { suite: 'bridge', breakage: 'session-auth-time', rule: 'ob.token.id-token' },
  { suite: 'bridge', breakage: 'prompt-none-iss', rule: 'ob.authorize.iss' },
  { suite: 'bridge', breakage: 'resume-reuse', rule: 'ob.transaction.resume-binding' },
  { suite: 'bridge', breakage: 'loopback-confidential', rule: 'ob.authorize.loopback' },
  { suite: 'bridge', breakage: 'approval-in-url', rule: 'ob.transaction.no-response-in-url' },
  { suite: 'bridge', breakage: 'code-expiry', rule: 'ob.code.format' },
  { suite: 'bridge', breakage: 'tx-expiry', rule: 'ob.transaction.expiry' },
  { suite: 'bridge', breakage: 'creating-ignored', rule: 'ob.transaction.creating' },
  { suite: 'bridge', breakage: 'verifier-ignored', rule: 'ob.code.wrong-verifier' },
  { suite: 'bridge', breakage: 'introspect-any', rule: 'ob.introspect.owner' },
  { suite: 'bridge', breakage: 'url-client-id-any', rule: 'ob.clients.url-document' },
  { suite: 'bridge', breakage: 'url-client-secret', rule: 'ob.clients.url-client-secret-refused' },
  { suite: 'bridge', breakage: 'url-redirect-origin', rule: 'ob.clients.url-redirect' },
  { suite: 'bridge', breakage: 'url-consent-verified', rule: 'ob.clients.url-consent' },
  { suite: 'bridge', breakage: 'url-http', rule: 'ob.clients.url-fetch-https' },
  { suite: 'bridge', breakage: 'url-follow-redirects', rule: 'ob.clients.url-fetch-no-redirect' },
  { suite: 'bridge', breakage: 'url-no-size-cap', rule: 'ob.clients.url-fetch-size' },
  { suite: 'bridge', breakage: 'url-slow-timeout', rule: 'ob.clients.url-fetch-timeout' },
  { suite: 'bridge', breakage: 'url-no-cache', rule: 'ob.clients.url-fetch-cache' },
  { suite: 'bridge', breakage: 'url-sector-client-id', rule: 'ob.subject.url-client-sector' },
  { suite: 'bridge', breakage: 'state-dropped', rule: 'ob.transaction.create' },
  { suite: 'bridge', breakage: 'failed-stays-waiting', rule: 'ob.transaction.failed' },
  { suite: 'bridge', breakage: 'native-signature-ignored', rule: 'ob.native.verifier' },
  { suite: 'bridge', breakage: 'first-party-all', rule: 'ob.consent.first-party' },
  { suite: 'bridge', breakage: 'consent-unnamed', rule: 'ob.consent.screen' },
  { suite: 'bridge', breakage: 'email-released', rule: 'ob.token.claims' },
  { suite: 'bridge', breakage: 'id-url-no-slash', rule: 'ob.id-input.projections' },
  { suite: 'bridge', breakage: 'subject-public', rule: 'ob.subject.sector' },
  { suite: 'bridge', breakage: 'retired-key-dropped', rule: 'ob.keys.rotation' },
  { suite: 'bridge', breakage: 'issuer-localhost', rule: 'ob.issuer.dotted-host' },
  { suite: 'bridge', breakage: 'push-no-interval', rule: 'ob.push.limits' },
  { suite: 'bridge', breakage: 'push-no-cap', rule: 'ob.push.limits' },
  { suite: 'bridge', breakage: 'push-match-code', rule: 'ob.push.no-match-code' },
  { suite: 'bridge', breakage: 'push-untyped', rule: 'ob.push.message' },
  { suite: 'bridge', breakage: 'cookies-unprefixed', rule: 'ob.cookies.host-prefix', tls: true },
  { suite: 'rp', breakage: 'resume-without-cookie', rule: 'ns.transaction.resume-refused' },
  { suite: 'rp', breakage: 'no-nonce-no-guard', rule: 'ns.nonce.single-use' },
  // A replayed approval names its own transaction (request_id is signed), so rule 5 shows only
  // once the one-approval guard is gone too: the same variant proves the restated rule.
  { suite: 'rp', breakage: 'no-nonce-no-guard', rule: 'ns.verify.5' },
  { suite: 'rp', breakage: 'no-audience-rule', rule: 'ns.verify.2' },
  { suite: 'rp', breakage: 'refusal-ends-transaction', rule: 'ns.transaction.same-device' },
  { suite: 'rp', breakage: 'nonce-before-signature', rule: 'ns.nonce.spend-on-success' },
  { suite: 'rp', breakage: 'approve-twice', rule: 'ns.transaction.one-approval' },
  { suite: 'rp', breakage: 'nonce-fail-open', rule: 'ns.nonce.fail-closed' },
  // An RP on a production name over plain http: its audience is http off development (both
  // rules say so, one in Request object, one in Authentication 5).
  { suite: 'rp', breakage: 'http-origin', rule: 'ns.request.audience-http-dev', tls: true },
  { suite: 'rp', breakage: 'http-origin', rule: 'ns.auth.5', tls: true },
  ...wire('rp', RP_WIRE),
  ...wire('bridge', BRIDGE_WIRE),
  ...wire('bridge', BRIDGE_MATRIX_WIRE),
  ...wire('relay', RELAY_WIRE),
  ...wire('drive', DRIVE_WIRE),
  ...wire('drive', DRIVE_MATRIX_WIRE),
  ...wire('relay', RELAY_OWNER_WIRE),
  ...wire('relay', RELAY_CORE_WIRE),
  ...wire('relay', RELAY_SESSIONS_WIRE),
  ...Object.entries(VERIFIER_VARIANTS).flatMap(([name, v]) => [v.rule, ...(v.restates ?? [])].map((rule): Variant => ({ suite: 'rp', breakage: `verifier:${name}`, rule }))),
];
