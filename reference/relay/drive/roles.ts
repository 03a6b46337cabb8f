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
 * The access decisions a broken variant may replace (reference/variants/drive-matrix.ts, through the
 * config's `driveSeams`, only for the harness's own tests); each default is the rule.
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
}
