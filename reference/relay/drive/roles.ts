// The roles a drive share grants, the actions each allows (ra.drive.roles), and the access decisions
// a broken variant may replace (DriveSeams). access.ts decides with them; the relay's config names
// the seams, so they live here, apart from the handlers that read the config.
import type { DriveStore, NodeRow, ShareRow } from './store.ts';

export type Role = 'read' | 'write' | 'admin' | 'append' | 'create';
const READ: readonly Role[] = ['read', 'write', 'admin'];
/** Which roles allow each action (ra.drive.roles). */
export const ALLOW = {
  read: READ,
  write: ['write', 'admin'],
  admin: ['admin'],
  append: ['append', 'write', 'admin'],
  create: ['create', 'write', 'admin'],
  upload: ['append', 'create', 'write', 'admin'],
} as const satisfies Record<string, readonly Role[]>;
export type Action = keyof typeof ALLOW;

/**
 * The decisions a broken variant may replace (reference/variants/drive-matrix.ts and
 * drive-seams.ts, through the config's `driveSeams`, only for the harness's own tests); each
 * default is the rule.
 */
export interface DriveSeams {
  /** Whether holding `roles` allows `action` (ra.drive.roles). */
  allows(action: Action, roles: ReadonlySet<Role>): boolean;
  /** Whether `share` holds on the node whose lineage (the node, then its folders up to the root) is `lineage`. */
  covers(d: { store: Pick<DriveStore, 'node'> }, drive: string, share: ShareRow, lineage: readonly NodeRow[]): boolean | Promise<boolean>;
  /** Whether `share` has expired at `now` (ms). */
  expired(share: ShareRow, now: number): boolean;
  /** Whether the `X-Svc-Link-Verifier` sent (null: none) opens a link whose verifier_hash is `hash`. */
  verifies(hash: string, sent: string | null): boolean;
  /** Whether a caller with neither proof nor link is taken for the owner (ra.drive.owner). */
  ownerUnproven(drive: string): boolean;
  /** Whether `known` may call a drive here, homed here or not (ra.drive.remote-members). */
  admits(known: { identity: string; local: boolean }): boolean;
  /** The group roster header a member's groups are read from (ra.drive.group-members). */
  roster(header: string | null): string | null;
  /** Whether a group roster passes one of its checks (`holds`: whether it lists the caller, whether it is signed by the group) (ra.drive.group-members). */
  rosterPasses(check: 'listed' | 'signed', holds: () => boolean): boolean;
  /** Whether a roster's epoch is compared with the group's current one (ra.drive.group-roster-check). */
  epochChecked(group: string): boolean;
  /** Whether a link request's proof-of-work holds: its token is one the link handed out (`live`) and its solution solves it (`solves`) (ra.drive.link-opens). */
  worked(live: () => Promise<boolean>, solves: () => boolean): Promise<boolean>;
  /** Whether a link that spent `share.used` of its `share.downloads` opens has none left (ra.drive.link-opens). */
  spent(share: ShareRow): boolean;
  /** Spends one open of a link (`spend`, the store's): false when none was left (ra.drive.link-opens). */
  spendOpen(spend: () => Promise<boolean>): Promise<boolean>;
  /** Whether a chunk read through a node is served, `referenced` (read when needed) saying whether the node references it (ra.drive.chunk-access). */
  chunkServed(referenced: () => Promise<boolean>): Promise<boolean>;
  /** Whether chunks/missing counts a chunk as held, `stored` saying whether the drive stores it (ra.drive.missing). */
  held(stored: boolean): boolean;
  /** The change sequence a page of changes starts after, given the cursor (ra.drive.changes). */
  changesAfter(cursor: number): number;
  /** Whether a change is announced only to the streams that may read its node (ra.drive.events). */
  changeFiltered(): boolean;
  /** Whether the streams of a member that lost its last share (unshared or expired) are ended (ra.drive.events-revocation). */
  endsRevoked(): boolean;
  /** Whether a commit is applied whole, in one transaction and with its chunks checked first (ra.drive.commit-validated). */
  commitsWhole(): boolean;
  /** Whether a manifest on `parent` may replace `head` (ra.drive.stale-base). */
  onHead(parent: unknown, head: string | null, operation?: unknown): boolean;
  /** A member's own list of shares (ra.drive.shares-list). */
  memberShares(shares: ShareRow[]): ShareRow[];
  /** The nodes whose shares a node's share list shows, given its lineage (the node first) (ra.drive.node-shares). */
  nodeSharesFrom(lineage: string[]): string[];
}
