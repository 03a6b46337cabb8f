// The relay's seams at its start: what a broken variant acting where the relay starts rather than
// on a request may replace (reference/variants/relay-start.ts). startRelay reads them once; nothing
// on the request path asks which variant runs.
import type { Auth } from './auth.ts';

/** What a start variant may replace. */
export interface StartSeams {
  /** The spool in this process's memory instead of the database. */
  spoolInMemory: boolean;
  /** A challenge accepted again after its use; two concurrent answers both spending it. */
  challengeReuse: boolean;
  challengeRace: boolean;
  /** Pairing offers that never lapse. */
  pairingForever: boolean;
  /** Undelivered mail that never expires (no spool sweep). */
  spoolSweep: boolean;
  /** Sessions kept beyond a restart (under the data directory). */
  keepSessions?: (auth: Auth, dataDir: string) => Promise<void>;
}

export const REFERENCE_START: StartSeams = { spoolInMemory: false, challengeReuse: false, challengeRace: false, pairingForever: false, spoolSweep: true };
