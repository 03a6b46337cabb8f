// The relay's seams outside the drive: the few decisions of accepting an envelope, keeping a
// system file and opening an inbox stream that a broken variant (reference/variants/relay-seams.ts)
// replaces where its bug cannot be written on the wire. The reference's own answers are these
// defaults; a variant's replacements come only with SVC_REFERENCE_ALLOW_BREAKAGE=1 (the config's
// `relaySeams`, set at start from a --break flag).
import type { DocumentCheck } from '../../protocol/relay/system-files.ts';

type Outcome = 'stored' | 'same' | 'conflict';

export interface RelaySeams {
  /** The time a message's session proof is judged at (ns.session-proof.relay-shared). */
  proofTime(proof: unknown, now: number): number;
  /** Whether a session proof whose session `revoked` (the store's answer) is refused (ra.sessions.revoked-stays-revoked). */
  revoked(revoked: boolean): boolean;
  /** The envelope as the handler reads it, once its fields are checked (ra.errors.listed-statuses). */
  envelope(e: Record<string, unknown>): Record<string, unknown>;
  /** Whether this relay keeps the recipient's inbox (ra.relay.locality): only a local one. */
  holdsInbox(recipient: { local: boolean } | undefined): boolean;
  /** What spooling an envelope came to, as the handler answers it (ra.messages.accepted). */
  spooled(outcome: Outcome): Outcome;
  /** Verifies, then stores (ra.relay.verify-before-store); true when the envelope was kept here. */
  accept(verify: () => Promise<void>, store: () => Promise<boolean>): Promise<boolean>;
  /** Whether an envelope of `kind` has its signature checked (ra.acks.signature). */
  signed(kind: 'message' | 'ack'): boolean;
  /** Whether a sign-in prompt is kept, given whether the recipient trusts its sender (ra.inbox.auth-request). */
  promptKept(trusted: boolean): boolean;
  /** The verdict on a group roster written by its owner (ra.system.group-roster). */
  rosterVerdict(verdict: DocumentCheck): DocumentCheck;
  /** Whether the owner may write `path`, which is in the relay-written zone or not (ra.system.relay-written). */
  ownerWrites(path: string, relayWritten: boolean): boolean;
  /** The bucket an availability lookup from `ip` is charged to (ra.availability.ip-limit): the address's own. */
  availabilityBucket(ip: string): string;
  /** The cursors a consume drops messages and acks through (ra.pickup.cursor): `through` and `ack_through`, each its own kind. */
  consumeThrough(through: number, ackThrough: number): [number, number];
  /** What a new inbox stream is told first (ra.events.no-replay): nothing, only what arrives after. */
  streamOpened(identity: string, pending: (identity: string) => Promise<ReadonlyArray<{ kind: string; id: string }>>, announce: (identity: string, id: string) => void): Promise<void>;
}

export const RELAY_SEAMS: RelaySeams = {
  proofTime: (_proof, now) => now,
  revoked: (revoked) => revoked,
  envelope: (e) => e,
  holdsInbox: (recipient) => recipient?.local === true,
  spooled: (outcome) => outcome,
  accept: async (verify, store) => {
    await verify();
    return store();
  },
  signed: () => true,
  promptKept: (trusted) => trusted,
  rosterVerdict: (verdict) => verdict,
  ownerWrites: (_path, relayWritten) => !relayWritten,
  streamOpened: async () => {},
  availabilityBucket: (ip) => ip,
  consumeThrough: (through, ackThrough) => [through, ackThrough],
};

/** The relay's seams: the reference's own, with a variant's replacements when one is configured. */
export const relaySeams = (config: { relaySeams?: Partial<RelaySeams> }): RelaySeams => (config.relaySeams ? { ...RELAY_SEAMS, ...config.relaySeams } : RELAY_SEAMS);
