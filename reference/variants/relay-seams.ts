// The reference relay broken one way each at a seam (hidden --break flags, only with
// SVC_REFERENCE_ALLOW_BREAKAGE=1), where the bug is a decision the wire cannot take for the relay:
// the order of verifying and storing, whose proof is taken, what a roster or a share allows. Each
// names the one rule it breaks and replaces decisions of the relay's seams (reference/relay/seams.ts)
// or the drive's (reference/relay/drive/access.ts); the handlers keep only the reference's own code.
// The bugs that show on the wire are wire variants (drive-seams-wire.ts).
import { randomUUID } from 'node:crypto';
import { parseRfc3339 } from '../../protocol/common/time.ts';
import type { RuleId } from '../../schemas/ts/rules.ts';
import type { Breakage } from '../relay/config.ts';
import { RULE_SEAMS, type DriveSeams } from '../relay/drive/access.ts';
import type { RelaySeams } from '../relay/seams.ts';

export interface SeamVariant {
  /** The suite whose checks judge it. */
  suite: 'relay' | 'drive';
  /** The one rule the variant breaks. */
  rule: RuleId;
  /** Rules the same variant proves too (a rule restating it, or one whose check it reaches). */
  restates?: RuleId[];
  /** What it does, in a line. */
  what: string;
  relay?: Partial<RelaySeams>;
  drive?: Partial<DriveSeams>;
}

/** The --break flags the relay's start reads itself (reference/relay/app.ts), not through a seam. */
type AtStart = 'spool-memory' | 'challenge-reuse' | 'challenge-race' | 'pairing-forever' | 'sessions-persisted' | 'spool-forever';
export type SeamBreak = Exclude<Breakage, AtStart>;

const always = () => true;
const never = () => false;

export const RELAY_SEAM_VARIANTS: Record<SeamBreak, SeamVariant> = {
  'verify-after-store': {
    suite: 'relay',
    rule: 'ra.relay.verify-before-store',
    what: 'an envelope is stored before its signature is checked, so a forged one is kept though refused',
    relay: {
      accept: async (verify, store) => {
        await store();
        await verify();
        return true;
      },
    },
  },
  'ack-unsigned': { suite: 'relay', rule: 'ra.acks.signature', what: "an ack's signature is never checked", relay: { signed: (kind) => kind !== 'ack' } },
  'neither-local': {
    suite: 'relay',
    rule: 'ra.relay.locality',
    what: 'an envelope from and to identities homed elsewhere is taken and spooled here',
    relay: { holdsInbox: always },
  },
  'id-drop': {
    suite: 'relay',
    rule: 'ra.messages.accepted',
    what: 'an envelope whose id another waiting one holds is answered 202 and dropped',
    relay: { spooled: (outcome) => (outcome === 'conflict' ? 'same' : outcome) },
  },
  'revoked-proof': { suite: 'relay', rule: 'ra.sessions.revoked-stays-revoked', what: "a revoked session's proof still signs", relay: { revoked: never } },
  // The fuzz's own test: a handler that URI-encodes every string field throws on a lone surrogate.
  'surrogate-500': {
    suite: 'relay',
    rule: 'ra.errors.listed-statuses',
    what: 'an envelope with a lone surrogate in a field is answered 500',
    relay: {
      envelope: (e) => {
        for (const v of Object.values(e)) if (typeof v === 'string') encodeURIComponent(v);
        return e;
      },
    },
  },
  // A blind broken server (round 2, relay-08, written without the suites): "the ack delete uses
  // `through` instead of `ackThrough`".
  'consume-acks-by-message-cursor': {
    suite: 'relay',
    rule: 'ra.pickup.cursor',
    what: 'a consume drops acks through the message cursor `through`, not through `ack_through`',
    relay: { consumeThrough: (through) => [through, through] },
  },
  'proof-expiry-ignored': {
    suite: 'relay',
    rule: 'ns.session-proof.relay-shared',
    what: 'a session proof is judged at its own issued_at, so an expired one holds',
    relay: { proofTime: (proof, now) => parseRfc3339((proof as { issued_at?: unknown } | null)?.issued_at) ?? now },
  },
  'events-replay': {
    suite: 'relay',
    rule: 'ra.events.no-replay',
    what: 'a new inbox stream announces every message still pending',
    relay: {
      streamOpened: async (identity, pending, announce) => {
        for (const row of await pending(identity)) if (row.kind === 'message') announce(identity, row.id);
      },
    },
  },
  'auth-request-untrusted': {
    suite: 'relay',
    rule: 'ob.push.trusted',
    restates: ['ra.inbox.auth-request'],
    what: 'a sign-in prompt from a service the recipient does not trust is stored',
    relay: { promptKept: always },
  },
  'relay-written-writable': { suite: 'relay', rule: 'ra.system.relay-written', what: 'the owner may write the relay-written zone', relay: { ownerWrites: always } },
  'roster-unverified': {
    suite: 'relay',
    rule: 'ra.system.group-roster',
    what: 'a group roster whose signature does not verify is kept (any roster of the right shape)',
    relay: { rosterVerdict: (verdict) => (!verdict.ok && verdict.reason.startsWith('the signature') ? { ok: true } : verdict) },
  },
  // Issue 25: "Each limit at N and N+1 within its scope, and untouched outside that scope."
  'availability-unlimited': {
    suite: 'relay',
    rule: 'ra.availability.ip-limit',
    what: 'availability lookups are never limited: each is charged to a bucket of its own',
    relay: { availabilityBucket: () => randomUUID() },
  },
  'availability-one-bucket': {
    suite: 'relay',
    rule: 'ra.availability.ip-limit',
    what: "availability lookups from every address are charged to one bucket, so one caller's lookups limit everyone's",
    relay: { availabilityBucket: () => 'every address' },
  },
  // The drive (reference/relay/drive/).
  'read-can-write': {
    suite: 'drive',
    rule: 'ra.drive.members',
    what: 'a member with `read` may also write, append and create',
    drive: { allows: (action, roles) => (action !== 'admin' && roles.has('read')) || RULE_SEAMS.allows(action, roles) },
  },
  // A blind broken server (round 3, drive2-02 and drive-01, both written without the suites): "a member
  // with only the `create` role can replace, remove or move existing nodes, and trim append files".
  'create-can-modify': {
    suite: 'drive',
    rule: 'ra.drive.members',
    what: 'a member with `create` may also replace, move, remove and trim',
    drive: { allows: (action, roles) => (action === 'write' && roles.has('create')) || RULE_SEAMS.allows(action, roles) },
  },
  'share-no-inherit': {
    suite: 'drive',
    rule: 'ra.drive.roles',
    what: 'a share holds on its own node only, not below it',
    drive: { covers: (_d, _drive, share, lineage) => share.node === lineage[0]?.node },
  },
  'stale-base-accepted': { suite: 'drive', rule: 'ra.drive.stale-base', what: 'a commit on an old base replaces the head', drive: { onHead: always } },
  // A blind broken server (drive-06, written without the suites): "The head check is skipped for `remove`".
  'stale-remove-accepted': {
    suite: 'drive',
    rule: 'ra.drive.stale-base',
    what: 'a remove on an old base is applied (the base is compared for the other operations)',
    drive: { onHead: (parent, head, operation) => operation === 'remove' || parent === head },
  },
  // "a chunk readable by hash through a share that does not cover it" (issue 25): a member reads a
  // chunk of a node it has no share on through the route of one it has.
  'chunk-by-hash': {
    suite: 'drive',
    rule: 'ra.drive.chunk-access',
    restates: ['ra.drive.members'],
    what: 'any chunk of the drive is served by its hash alone, through any node',
    drive: { chunkServed: async () => true },
  },
  'revoked-stream-open': {
    suite: 'drive',
    rule: 'ra.drive.events-revocation',
    what: "an unshared member's drive stream stays open",
    drive: { endsRevoked: never },
  },
  'link-verifier-ignored': { suite: 'drive', rule: 'ra.drive.link-auth', what: 'a password link opens without its verifier', drive: { verifies: always } },
  'link-opens-ignored': {
    suite: 'drive',
    rule: 'ra.drive.link-opens',
    what: 'a link outlives its opens',
    drive: {
      spent: never,
      spendOpen: async (spend) => {
        await spend();
        return true;
      },
    },
  },
  'events-unfiltered': { suite: 'drive', rule: 'ra.drive.events', what: 'a change is announced to every stream of the drive, whatever it may read', drive: { changeFiltered: never } },
  'commit-half-applied': {
    suite: 'drive',
    rule: 'ra.drive.commit-validated',
    what: "no transaction, and a manifest's head is written before its chunks are checked, so a refused commit leaves part of itself",
    drive: { commitsWhole: never },
  },
  'group-roster-ignored': {
    suite: 'drive',
    rule: 'ra.drive.group-members',
    what: "a group roster's members and signature are taken as given",
    drive: { rosterPasses: always },
  },
  'group-roster-stale': { suite: 'drive', rule: 'ra.drive.group-roster-check', what: "an older epoch's group roster is taken", drive: { epochChecked: never } },
  'group-members-refused': {
    suite: 'drive',
    rule: 'ra.drive.group-members',
    what: 'the group roster header is ignored, so no member calls as a group',
    drive: { roster: () => null },
  },
  'drive-unauthenticated': { suite: 'drive', rule: 'ra.drive.owner', what: 'a caller with no proof is taken for the owner', drive: { ownerUnproven: always } },
  'remote-members-refused': {
    suite: 'drive',
    rule: 'ra.drive.remote-members',
    what: 'only identities homed here may call a drive',
    drive: { admits: (known) => known.local },
  },
  'changes-skip': { suite: 'drive', rule: 'ra.drive.changes', what: 'the change right after the cursor is skipped', drive: { changesAfter: (cursor) => cursor + 1 } },
  'missing-lists-stored': { suite: 'drive', rule: 'ra.drive.missing', what: 'chunks/missing lists chunks the drive holds again', drive: { held: never } },
  'shares-empty': { suite: 'drive', rule: 'ra.drive.shares-list', what: "a member's list of its shares is empty", drive: { memberShares: () => [] } },
  'node-shares-no-ancestors': {
    suite: 'drive',
    rule: 'ra.drive.node-shares',
    what: "a node's share list shows only the shares on the node itself, not those on its folders",
    drive: { nodeSharesFrom: (lineage) => lineage.slice(0, 1) },
  },
  // A blind broken server (round 2, drive-03, written without the suites): "lists shares on F and its parent folder only".
  'node-shares-parent-only': {
    suite: 'drive',
    rule: 'ra.drive.node-shares',
    what: "a node's share list shows the shares on the node and its folder, not those further up",
    drive: { nodeSharesFrom: (lineage) => lineage.slice(0, 2) },
  },
};

/** The seams the --break flags replace (only those; each default stays the reference's). */
export function seamsOfBreaks(breaks: readonly string[]): { relay: Partial<RelaySeams>; drive: Partial<DriveSeams> } {
  const chosen = breaks.flatMap((b) => (b in RELAY_SEAM_VARIANTS ? [RELAY_SEAM_VARIANTS[b as SeamBreak]] : []));
  return { relay: Object.assign({}, ...chosen.map((v) => v.relay ?? {})), drive: Object.assign({}, ...chosen.map((v) => v.drive ?? {})) };
}
