// The broken variants of the reference servers, each with the one rule it breaks: `npm run
// sensitivity` runs each against only the checks citing that rule, and a rule counts as proven
// when one of those checks fails. The variants live beside the code they break (hidden --break
// flags of the relay and the bridge, wrappers of the RP in test/rp/helpers.ts).
import type { RuleId } from '../../schemas/ts/rules.ts';
import type { Breakage as RpBreakage } from '../rp/helpers.ts';
import { RELAY_SEAM_VARIANTS, type SeamVariant } from '../../reference/variants/relay-seams.ts';
import { START_VARIANTS } from '../../reference/variants/relay-start.ts';
import { BRIDGE_SEAM_VARIANTS } from '../../reference/variants/bridge-seams.ts';
import { URL_CLIENT_VARIANTS } from '../../reference/variants/url-clients.ts';
import type { WireVariant } from '../../reference/variants/kit.ts';
import { WIRE_TABLES } from '../../reference/variants/index.ts';
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

/** One variant per rule a seam variant (a hidden --break flag) breaks: its rule and the rules it restates. */
function seams(table: Record<string, SeamVariant>): Variant[] {
  return Object.entries(table).flatMap(([name, v]) => [v.rule, ...(v.restates ?? [])].map((rule): Variant => ({ suite: v.suite, breakage: name, rule })));
}

/** One variant per --break flag of the bridge (reference/variants/bridge-seams.ts, url-clients.ts). */
function bridgeSeams(table: Record<string, { rule: RuleId; tls?: true }>): Variant[] {
  return Object.entries(table).map(([name, v]): Variant => ({ suite: 'bridge', breakage: name, rule: v.rule, ...(v.tls ? { tls: v.tls } : {}) }));
}

export const VARIANTS: readonly Variant[] = [
  ...Object.entries(START_VARIANTS).map(([name, v]): Variant => ({ suite: 'relay', breakage: name, rule: v.rule })),
  ...seams(RELAY_SEAM_VARIANTS),
  ...bridgeSeams(BRIDGE_SEAM_VARIANTS),
  ...bridgeSeams(URL_CLIENT_VARIANTS),
  { suite: 'rp', breakage: 'resume-without-cookie', rule: 'ns.transaction.resume-refused' },
  { suite: 'rp', breakage: 'no-nonce-no-guard', rule: 'ns.nonce.single-use' },
  // A replayed approval names its own transaction (request_id is signed), so rule 5 shows only
  // once the one-approval guard is gone too: the same variant proves the restated rule.
  { suite: 'rp', breakage: 'no-nonce-no-guard', rule: 'ns.verify.5' },
  { suite: 'rp', breakage: 'no-audience-rule', rule: 'ns.verify.2' },
  { suite: 'rp', breakage: 'refusal-ends-transaction', rule: 'ns.transaction.same-device' },
  { suite: 'rp', breakage: 'nonce-before-signature', rule: 'ns.nonce.spend-on-success' },
  { suite: 'rp', breakage: 'approve-twice', rule: 'ns.transaction.one-approval' },
  // Issue 25: "Each single-use secret replayed, and raced 20 ways."
  { suite: 'rp', breakage: 'approve-race', rule: 'ns.transaction.one-approval' },
  { suite: 'rp', breakage: 'nonce-fail-open', rule: 'ns.nonce.fail-closed' },
  // An RP on a production name over plain http: its audience is http off development (both
  // rules say so, one in Request object, one in Authentication 5).
  { suite: 'rp', breakage: 'http-origin', rule: 'ns.request.audience-http-dev', tls: true },
  { suite: 'rp', breakage: 'http-origin', rule: 'ns.auth.5', tls: true },
  // A chunk served by its hash alone also lets a link holder read another node's chunk through
  // its own node's path (the link's read-bound facet, drive/matrix/reads-bound).
  { suite: 'drive', breakage: 'chunk-by-hash', rule: 'ra.drive.link-auth' },
  // One bucket for every sender throttles acks as it does messages ("Same signature, rate limits
  // and locality rule as messages"): the ack's sender-scope cell (relay/matrix/limit-sender-rate).
  { suite: 'relay', breakage: 'wire:core-rate-per-relay', rule: 'ra.acks.signature' },
  ...WIRE_TABLES.flatMap(([suite, table]) => wire(suite, table)),
  ...Object.entries(VERIFIER_VARIANTS).flatMap(([name, v]) => [v.rule, ...(v.restates ?? [])].map((rule): Variant => ({ suite: 'rp', breakage: `verifier:${name}`, rule }))),
];
