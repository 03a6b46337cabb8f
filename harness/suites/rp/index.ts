// The `rp` suite: checks any relying party over the network (HTTP to the RP, the test identity
// authority for DNS and HTTPS resolution), driven through the start contract (ns.start.contract)
// and at the URLs the RP publishes. Every check starts its own transaction, cites the rules its
// assertions decide (document rules, or only project decisions: a profile check), and keeps the
// HTTP exchanges as evidence.
import type { Check, SuiteLoad } from '../../run/model.ts';
import { ConfigError } from '../../run/exit.ts';
import { HttpClient, HttpError, viaAuthority } from '../../actors/http.ts';
import { normalizeOrigin } from '../../../protocol/common/url.ts';
import { rpCheck } from './check.ts';
import { fetchPublished, type RpTarget } from './driver.ts';
import { once } from '../../run/once.ts';
import { scenarios, verificationChecks, type ScenarioResult } from './checks/verification/index.ts';
import { transactionChecks } from './checks/transactions.ts';
import { surfaceChecks } from './checks/surface.ts';
import { lifecycleChecks } from './checks/lifecycle.ts';
import { pollChecks } from './checks/poll.ts';
import { concurrencyChecks } from './checks/concurrency.ts';
import { robustnessChecks } from './checks/robustness.ts';
import { propertyChecks } from './checks/properties.ts';
import { modelChecks, subtleChecks } from './checks/subtle.ts';
import { rpFuzzChecks } from './checks/fuzz.ts';

export type { RpTarget } from './driver.ts';

/** The conformance cases the shared vectors pin (ns.version.vectors), as live scenarios. */
const PINNED: Array<[string, string]> = [
  ['valid identity-key signature', 'accept/identity-key'],
  ['valid session-delegated signature with proof chain', 'accept/session-key'],
  ['valid login-only approval with empty scope line', 'accept/login-only'],
  ['expired', '4/expired'],
  ['window over 5 minutes', '4/window-too-long'],
  ['wrong audience with valid signature', '2/audience-other-origin'],
  ['scope outside the RP namespace', '3/scope-foreign'],
  ['unsorted scopes', '3/scopes-unsorted'],
  ['statement edited after signing', '7/statement-edited'],
];

export async function rpSuite(target: RpTarget): Promise<SuiteLoad> {
  const origin = normalizeOrigin(target.origin);
  if (origin === undefined) throw new ConfigError(`--rp ${target.origin} is not an origin (scheme://host[:port])`);
  const t: RpTarget = { ...target, origin, processes: target.processes.length > 0 ? target.processes : [origin] };
  t.network ??= await viaAuthority(t.authority).catch((error: Error) => {
    throw new ConfigError(`the test authority cannot be reached: ${error.message}`);
  });
  await reachable(t);
  // What the RP publishes is read once and shared by every check (poll_uri, response_uris, context_uri).
  t.published ??= once(() => fetchPublished(t));

  return { checks: rpChecks(t), skipped: [], coverageDocs: [1] };
}

/** Every check of the suite, built without touching the network (the matrix lists them against a placeholder target). */
export function rpChecks(t: RpTarget): Check[] {
  const results = new Map<string, () => Promise<ScenarioResult>>();
  const checks: Check[] = [
    ...surfaceChecks(t),
    ...lifecycleChecks(t),
    ...pollChecks(t),
    ...transactionChecks(t),
    ...verificationChecks(t, scenarios(t.profile), results),
    ...concurrencyChecks(t),
    ...robustnessChecks(t),
    ...propertyChecks(t),
    ...modelChecks(t),
    ...subtleChecks(t),
    ...rpFuzzChecks(t),
  ];
  checks.push(
    rpCheck(t, {
      id: 'rp/vectors/pinned-cases',
      title: 'the conformance cases the shared vectors pin, reproduced live against this RP (the replay case is rp/nonce/replay)',
      rules: ['ns.version.vectors'],
      context: ['ns.start.contract', 'ns.transport.poll-shape'],
      run: async (s, e) => {
        for (const [label, name] of PINNED) {
          const run = results.get(name);
          if (!run) throw new Error(`no scenario ${name}`);
          const r = await run();
          s.exchanges.push(...r.exchanges.slice(-6));
          const accepting = name.startsWith('accept/');
          if (accepting) e.that(r.genuineProblem === undefined, `${label}: ${r.genuineProblem}`);
          else e.that(r.status >= 400 && r.status < 500 && r.after !== 'completed', `${label}: answered ${r.answer}${r.after === 'completed' ? ', and the login completed' : ''}`);
        }
      },
    }),
  );
  return checks;
}

/** The RP must answer at all: otherwise the run tests nothing (exit 2), not 90 failures. */
async function reachable(t: RpTarget): Promise<void> {
  const client = new HttpClient({ ...t.network, timeoutMs: 10_000 });
  try {
    for (const base of new Set([t.origin, ...t.processes])) {
      try {
        await client.get(`${base}${t.profile.ids.metadata_path}`, { headers: { accept: 'application/json' } });
      } catch (error) {
        if (error instanceof HttpError) throw new ConfigError(`the RP at ${base} cannot be reached: ${error.message}`);
        throw error;
      }
    }
  } finally {
    await client.close();
  }
}
