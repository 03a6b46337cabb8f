// The replay race (many concurrent deliveries of one approval, spread across the RP's processes)
// and the nonce cache key (two differently signed approvals of one nonce), plus the fail-closed
// nonce cache when an instance with an unreachable store is available.
import type { Check } from '../../../run/model.ts';
import { rpCheck } from '../check.ts';
import { CheckSkip, type Session, accepted, envelopeOf, onProcess, refused, safeJson, said, sessionFor, sign, type RpTarget } from '../driver.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { isCode } from '../../../run/answers.ts';

export const RACE_DELIVERIES = 24;
/** Identities approving one transaction at once: their nonce keys differ, so only the transaction's one approval refuses the rest. */
const RACE_IDENTITIES = 20;

export function concurrencyChecks(target: RpTarget): Check[] {
  const c = (spec: Parameters<typeof rpCheck>[1]) => rpCheck(target, spec);
  const processes = target.processes.length > 0 ? target.processes : [target.origin];
  return [
    c({
      id: 'rp/race/replay',
      title: `${RACE_DELIVERIES} concurrent deliveries of one approval${processes.length > 1 ? ` across ${processes.length} processes` : ''}: exactly one is accepted`,
      rules: ['ns.nonce.single-use', 'ns.nonce.shared-atomic', 'ns.verify.5', 'ns.transaction.one-approval'],
      context: ['ns.start.contract'],
      cells: [
        { rule: 'ns.verify.5', facet: 'once', value: 'race', operation: 'postDelivery' },
        { rule: 'ns.nonce.single-use', facet: 'once', value: 'race', operation: 'postDelivery' },
      ],
      run: async (s, e) => {
        const t = await s.start();
        const who = await s.identity();
        const approval = sign(s.profile, t.request, who);
        const base = await s.responseUri(t.request);
        const clients = processes.map(() => s.client(false));
        const answers = await Promise.all(
          Array.from({ length: RACE_DELIVERIES }, (_, i) =>
            s
              .deliver(t.request, approval, { url: onProcess(base, processes[i % processes.length]!), client: clients[i % clients.length]!, ...(i % 2 ? { match: t.matchCode } : {}) })
              .catch((error: Error) => error),
          ),
        );
        const ok = answers.filter((a): a is HttpResponse => !(a instanceof Error) && accepted(a));
        const errors = answers.filter((a) => a instanceof Error);
        const statuses = answers.map((a) => (a instanceof Error ? 'error' : a.status));
        e.that(errors.length === 0, `${errors.length} deliveries failed at the HTTP level: ${(errors[0] as Error | undefined)?.message}`);
        e.that(ok.length === 1, `${ok.length} of ${RACE_DELIVERIES} concurrent deliveries were accepted, expected exactly 1 (statuses ${statuses.join(',')})`);
        for (const a of answers) if (!(a instanceof Error) && !accepted(a)) e.that(refused(a), `a losing delivery answered ${said(a)}, expected a refusal (4xx)`);
        s.note(`statuses ${statuses.join(',')} over ${processes.length} process(es)`);
      },
    }),
    c({
      id: 'rp/race/identity-and-session',
      title: 'the identity-signed and a session-signed approval of one nonce, delivered at once: exactly one is accepted (the nonce key is audience|identity|request_id|nonce)',
      rules: ['ns.nonce.cache-key', 'ns.transaction.one-approval'],
      context: ['ns.start.contract', 'ns.nonce.single-use'],
      run: async (s, e) => {
        const t = await s.start();
        const who = await s.identity();
        const a = sign(s.profile, t.request, who);
        const b = sign(s.profile, t.request, who, sessionFor(s.profile, who));
        const base = await s.responseUri(t.request);
        const answers = await Promise.all([a, b, a, b].map((x, i) => s.deliver(t.request, x, { url: onProcess(base, processes[i % processes.length]!), client: s.client(false) })));
        const ok = answers.filter(accepted).length;
        e.that(ok === 1, `${ok} of 4 deliveries were accepted (statuses ${answers.map((r) => r.status).join(',')}), expected exactly 1`);
      },
    }),
    c({
      id: 'rp/race/many-identities',
      title: `approvals of one transaction by ${RACE_IDENTITIES} identities (so no nonce is shared), delivered at once${processes.length > 1 ? ` across ${processes.length} processes` : ''}: exactly one is accepted`,
      rules: ['ns.transaction.one-approval'],
      context: ['ns.start.contract', 'ns.nonce.cache-key'],
      cells: [{ rule: 'ns.transaction.one-approval', facet: 'once', value: 'race', operation: 'postDelivery' }],
      run: async (s, e) => {
        const t = await s.start();
        const approvals = await Promise.all(Array.from({ length: RACE_IDENTITIES }, async () => sign(s.profile, t.request, await s.identity())));
        const base = await s.responseUri(t.request);
        const answers = await Promise.all(
          approvals.map((a, i) => s.deliver(t.request, a, { url: onProcess(base, processes[i % processes.length]!), client: s.client(false), ...(i % 2 ? { match: t.matchCode } : {}) })),
        );
        const ok = answers.filter(accepted).length;
        e.that(ok === 1, `${ok} of ${RACE_IDENTITIES} approvals by different identities were accepted (statuses ${answers.map((r) => r.status).join(',')}), expected exactly 1`);
      },
    }),
    c({
      id: 'rp/process/shared-transactions',
      title: 'a login started on each process (each one live while the next process starts its own) is delivered to and completed on the others (one RP, shared stores)',
      rules: ['ns.nonce.shared-atomic'],
      context: ['ns.start.contract', 'ns.transport.poll-shape', 'ns.transaction.cross-device'],
      run: async (s, e) => {
        if (processes.length < 2) throw new CheckSkip('one process given (--rp-process adds more)');
        const on = (i: number) => processes[i % processes.length]!;
        const started = [];
        for (let i = 0; i < processes.length; i++) started.push(await s.start(undefined, onProcess(target.startUrl, on(i))));
        for (const [i, t] of started.entries()) {
          const who = await s.identity();
          const d = await s.deliver(t.request, sign(s.profile, t.request, who), { url: onProcess(await s.responseUri(t.request), on(i + 1)), match: t.matchCode });
          e.that(accepted(d), `a login started on ${on(i)}, delivered to ${on(i + 1)}, answered ${said(d)}`);
          const polled = await s.poll(t.pollSecret, s.client(false), onProcess(await s.pollUrl(), on(i + 2)));
          const body = safeJson(polled) as { status?: string } | undefined;
          e.that(accepted(polled) && body?.status === 'completed', `the poll on ${on(i + 2)} answered ${said(polled)}`);
        }
        s.note(`${processes.length} processes`);
      },
    }),
    c({
      id: 'rp/nonce/fail-closed',
      title: 'an RP instance whose nonce cache is unreachable refuses approvals and completes no login',
      rules: ['ns.nonce.fail-closed'],
      context: ['ns.start.contract', 'ns.transport.poll-shape', 'ns.verify.5'],
      run: async (s, e) => {
        const t = await failClosed(s);
        // Any refusal: the document names no status (the project's 503 is rp/codes/nonce/fail-closed).
        e.that(!accepted(t.delivered), `the delivery answered ${said(t.delivered)}, expected a refusal`);
        e.that(!t.polled.text().includes('"completed"'), 'the login completed without a nonce cache');
      },
    }),
    c({
      id: 'rp/codes/nonce/fail-closed',
      title: 'with its nonce cache unreachable, a delivery answers 503 nonce_cache_unavailable in the envelope',
      rules: ['ns.delivery.reject-status', 'ns.errors.codes', 'ns.errors.envelope'],
      context: ['ns.nonce.fail-closed', 'ns.start.contract'],
      run: async (s, e) => {
        const { delivered: d } = await failClosed(s);
        e.that(d.status === 503, `the delivery answered ${said(d)}, expected 503`);
        const env = envelopeOf(d);
        if (typeof env === 'string') e.fail(env);
        else e.that(isCode(env.error, 'nonce_cache_unavailable'), `expected error nonce_cache_unavailable, got ${said(d)}`);
      },
    }),
  ];
}

/** A delivery to the instance whose nonce store is down (skips when none was given). */
async function failClosed(s: Session): Promise<{ delivered: HttpResponse; polled: HttpResponse }> {
  const broken = s.target.brokenStore;
  if (!broken) throw new CheckSkip('no RP instance with an unreachable nonce store was given (--rp-broken-store ORIGIN)');
  const t = await s.start(undefined, broken.startUrl);
  const who = await s.identity();
  const delivered = await s.deliver(t.request, sign(s.profile, t.request, who), { url: onProcess(await s.responseUri(t.request), broken.origin) });
  const polled = await s.poll(t.pollSecret, s.client(false), onProcess(await s.pollUrl(), broken.origin));
  return { delivered, polled };
}
