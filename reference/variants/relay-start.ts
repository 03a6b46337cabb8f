// The relay's broken variants that act where it starts rather than on a request (hidden --break
// flags, only with SVC_REFERENCE_ALLOW_BREAKAGE=1): each is named, carries the rule it breaks, and
// replaces seams of the start (reference/relay/start-seams.ts).
import type { RuleId } from '../../schemas/ts/rules.ts';
import type { Breakage } from '../relay/config.ts';
import { REFERENCE_START, type StartSeams } from '../relay/start-seams.ts';
import { persistSessions } from '../relay/variants.ts';

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
