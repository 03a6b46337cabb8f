// The relay's broken variants that act where it starts rather than on a request (hidden --break
// flags, only with SVC_REFERENCE_ALLOW_BREAKAGE=1): each is named, carries the rule it breaks,
// and replaces one seam of the start. startRelay reads the seams once; nothing on the request
// path asks which variant runs.
import type { RuleId } from '../../schemas/ts/rules.ts';
import type { Auth } from './auth.ts';
import type { Breakage } from './config.ts';
import { persistSessions } from './variants.ts';

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

interface StartVariant {
  rule: RuleId;
  seams: Partial<StartSeams>;
}

export const START_VARIANTS = {
  'spool-memory': { rule: 'ra.spool.durable', seams: { spoolInMemory: true } },
  'challenge-reuse': { rule: 'ra.auth.challenge-single-use', seams: { challengeReuse: true } },
  'challenge-race': { rule: 'ra.auth.challenge-single-use', seams: { challengeRace: true } },
  'pairing-forever': { rule: 'ra.pairing.expiry', seams: { pairingForever: true } },
  'spool-forever': { rule: 'ra.spool.expiry', seams: { spoolSweep: false } },
  'sessions-persisted': { rule: 'ra.sessions.memory', seams: { keepSessions: persistSessions } },
} satisfies Partial<Record<Breakage, StartVariant>>;

/** The start seams of the variants named in `breakages` (the reference's own without any). */
export function startSeams(breakages: ReadonlySet<Breakage>): StartSeams {
  const seams = { ...REFERENCE_START };
  for (const [name, variant] of Object.entries(START_VARIANTS)) if (breakages.has(name as Breakage)) Object.assign(seams, variant.seams);
  return seams;
}
