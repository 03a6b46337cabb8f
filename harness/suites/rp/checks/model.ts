// A model-based property over document 1's transaction table: random sequences of commands
// (start, deliver bare or with the right or wrong match code, by the first or a second identity,
// resume with or without the binding cookie and with the right or a wrong code, poll with the
// right or a wrong secret, replay an accepted approval) run against the RP, each answer checked
// against a model of the table. The sequence is a plain array of command names, so fast-check
// shrinks it and `--seed`/`--replay` (harness/run/property.ts) reproduce it exactly; a failure
// shows the shrunk sequence, what each command answered, and the HTTP exchanges.
//
// No expiry command: the start contract cannot ask for a short-lived request (ns.start.options
// has no window), and waiting out a real window (up to 5 minutes) is too slow for a property.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { Check } from '../../../run/model.ts';
import type { PropertyVerdict } from '../../../run/property.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { rpProperty } from '../check.ts';
import { accepted, isObject, otherMatchCode, refused, safeJson, said, Session, sign, type RpTarget, type Started, type TestIdentity } from '../driver.ts';

export const COMMANDS = [
  'deliver(first,bare)',
  'deliver(first,right-match)',
  'deliver(first,wrong-match)',
  'deliver(second,bare)',
  'deliver(second,right-match)',
  'resume(cookie,right-code)',
  'resume(no-cookie,right-code)',
  'resume(cookie,wrong-code)',
  'poll(right-secret)',
  'poll(wrong-secret)',
  'replay(bare)',
  'replay(right-match)',
  'start',
] as const;
export type Command = (typeof COMMANDS)[number];

/** Sequences per run at most (the suite stays fast); fewer when --runs asks for fewer. */
const MAX_SEQUENCES = 20;
const MAX_COMMANDS = 8;

/**
 * The table's states, descriptive labels. `unfinished`: a refused resume left the login
 * unfinished for good. `doubt` marks an approved same-device transaction after a resume with a
 * wrong code: the document does not say whether the RP can still tell which transaction a wrong
 * code was meant for, so whether the right code still completes is left open (the poll or the
 * next resume settles it).
 */
type State = 'pending' | 'approved-same' | 'approved-cross' | 'completed' | 'ended' | 'unfinished';

interface Tx {
  started: Started;
  approvals: [Record<string, unknown>, Record<string, unknown>];
  state: State;
  doubt: boolean;
  resumeUri?: string;
  /** Who was approved (the identity a completion may name). */
  identity?: string;
}

class ModelMismatch extends Error {}

function receiptOf(r: HttpResponse): Record<string, unknown> | undefined {
  const b = accepted(r) ? safeJson(r) : undefined;
  return isObject(b) ? b : undefined;
}

/** One sequence against the RP; throws ModelMismatch at the first answer the model does not allow. */
class Run {
  readonly log: string[] = [];
  readonly spent: Array<{ tx: Tx; approval: Record<string, unknown> }> = [];
  tx!: Tx;

  constructor(
    readonly s: Session,
    readonly who: [TestIdentity, TestIdentity],
  ) {}

  expect(condition: boolean, problem: string): void {
    if (!condition) throw new ModelMismatch(problem);
  }

  async start(): Promise<string> {
    const started = await this.s.start();
    const approvals = this.who.map((w) => sign(this.s.profile, started.request, w)) as Tx['approvals'];
    this.tx = { started, approvals, state: 'pending', doubt: false };
    return 'started (pending)';
  }

  /** Whether `cmd` applies in the model's state (commands that do not are skipped, unrecorded). */
  applies(cmd: Command): boolean {
    if (cmd.startsWith('resume')) return this.tx.resumeUri !== undefined;
    if (cmd.startsWith('replay')) return this.spent.length > 0;
    return true;
  }

  async step(cmd: Command): Promise<string> {
    const tx = this.tx;
    const s = this.s;
    const m = /^(\w+)(?:\(([^,)]+)(?:,([^)]+))?\))?$/.exec(cmd)!;
    const [, verb, a, b] = m;
    if (verb === 'start') return this.start();

    if (verb === 'deliver') {
      const index = a === 'first' ? 0 : 1;
      const approval = tx.approvals[index];
      const match = b === 'bare' ? undefined : b === 'right-match' ? tx.started.matchCode : otherMatchCode(tx.started.matchCode);
      const r = await s.deliver(tx.started.request, approval, match === undefined ? {} : { match });
      if (tx.state !== 'pending') {
        // One approval per transaction; an ended transaction is not revived; nothing changes.
        this.expect(refused(r), `a delivery to a transaction that is ${tx.state} answered ${said(r)}, expected a refusal (4xx)`);
        return `refused ${r.status} (${tx.state})`;
      }
      if (b === 'wrong-match') {
        this.expect(refused(r), `a wrong match code answered ${said(r)}, expected a refusal (4xx)`);
        tx.state = 'ended';
        return `refused ${r.status} -> ended`;
      }
      const receipt = receiptOf(r);
      this.expect(
        receipt !== undefined && receipt.status === 'ok',
        `a valid ${b === 'bare' ? 'same-device' : 'cross-device'} approval of a pending transaction answered ${said(r)}, expected the receipt {status: "ok"}`,
      );
      this.spent.push({ tx, approval });
      tx.identity = this.who[index].identity;
      if (b === 'bare') {
        this.expect(typeof receipt!.resume_uri === 'string', `the same-device receipt has no resume_uri: ${said(r)}`);
        tx.resumeUri = receipt!.resume_uri as string;
        tx.state = 'approved-same';
      } else {
        this.expect(receipt!.resume_uri === undefined, `the cross-device receipt carries resume_uri: ${said(r)}`);
        tx.state = 'approved-cross';
      }
      return `accepted ${r.status} -> ${tx.state}`;
    }

    if (verb === 'replay') {
      const last = this.spent.at(-1)!;
      const r = await s.deliver(last.tx.started.request, last.approval, a === 'bare' ? {} : { match: last.tx.started.matchCode });
      this.expect(refused(r), `replaying an accepted approval answered ${said(r)}, expected a refusal (4xx)`);
      return `refused ${r.status}`;
    }

    if (verb === 'resume') {
      let uri = tx.resumeUri!;
      if (b === 'wrong-code') {
        const u = new URL(uri);
        u.searchParams.set('code', encodeBase64url(randomBytes(32)));
        uri = u.toString();
      }
      const r = await s.resume(uri, a === 'cookie' ? tx.started.browser : s.client(true));
      if (tx.state === 'completed') return `answered ${r.status} (already completed)`;
      const polled = await s.pollStatus(tx.started.pollSecret);
      const completed = polled.status === 'completed';
      if (tx.state === 'approved-same' && a === 'cookie' && b === 'right-code') {
        if (tx.doubt && !completed) {
          tx.state = 'unfinished';
          return `answered ${r.status}, not completed -> unfinished (after a wrong code)`;
        }
        this.expect(r.status < 400, `resume with the binding cookie and the unused code answered ${said(r)}`);
        this.expect(completed, `after resume with the binding cookie and the unused code the poll says ${JSON.stringify(polled.status)}, expected "completed"`);
        this.completion(polled.identity);
        tx.state = 'completed';
        return `answered ${r.status} -> completed`;
      }
      this.expect(
        !completed,
        `a resume ${a === 'cookie' ? 'with' : 'without'} the binding cookie and ${b === 'right-code' ? 'the right' : 'a wrong'} code in state ${tx.state} completed the login (resume answered ${said(r)})`,
      );
      if (tx.state === 'approved-same') {
        if (b === 'right-code')
          tx.state = 'unfinished'; // the code met no cookie: the login stays unfinished
        else tx.doubt = true;
      }
      return `answered ${r.status}, not completed -> ${tx.state}${tx.doubt ? ' (doubt)' : ''}`;
    }

    // poll
    if (a === 'wrong-secret') {
      const p = await s.pollStatus(encodeBase64url(randomBytes(32)));
      this.expect(
        p.identity === undefined && p.status !== 'completed' && p.status !== 'approved' && p.response.setCookies.length === 0,
        `a poll with a wrong secret revealed something: ${said(p.response)}`,
      );
      return `answered ${p.response.status}`;
    }
    const p = await s.pollStatus(tx.started.pollSecret);
    const shown = `${p.response.status} ${JSON.stringify(p.status)}`;
    switch (tx.state) {
      case 'approved-cross':
      case 'completed':
        this.expect(p.status === 'completed', `the poll of a transaction that is ${tx.state} answered ${said(p.response)}, expected "completed"`);
        this.completion(p.identity);
        tx.state = 'completed';
        return `${shown} -> completed`;
      case 'approved-same':
        if (tx.doubt && p.status !== 'approved') {
          this.expect(p.status !== 'completed' && p.identity === undefined, `the poll before resume answered ${said(p.response)}`);
          tx.state = 'unfinished';
          return `${shown} -> unfinished`;
        }
        // Before resume the poll reports approved and hands out nothing.
        this.expect(
          p.status === 'approved' && p.identity === undefined && p.response.setCookies.length === 0,
          `the poll before resume answered ${said(p.response)}, expected "approved" and nothing handed out`,
        );
        tx.doubt = false;
        return shown;
      default:
        this.expect(p.status !== 'completed' && p.identity === undefined, `the poll of a transaction that is ${tx.state} answered ${said(p.response)}`);
        return shown;
    }
  }

  completion(identity: string | undefined): void {
    if (identity !== undefined) this.expect(identity === this.tx.identity, `the login completed as ${identity}, expected ${this.tx.identity}`);
  }
}

export function modelChecks(target: RpTarget): Check[] {
  let identities: Promise<[TestIdentity, TestIdentity]> | undefined;
  const check = rpProperty<Command[]>({
    id: 'rp/property/transaction-model',
    title: `random sequences of up to ${MAX_COMMANDS} commands (start, deliver bare or with the right or wrong match code, resume with or without cookie and code, poll with the right or a wrong secret, replay) answer as document 1's transaction table allows`,
    rules: [
      'ns.transaction.same-device',
      'ns.transaction.resume',
      'ns.transaction.resume-refused',
      'ns.transaction.cross-device',
      'ns.transaction.poll',
      'ns.transaction.match-wrong',
      'ns.transaction.poll-before-resume',
      'ns.transaction.one-approval',
    ],
    context: ['ns.start.contract', 'ns.transport.poll-shape', 'ns.auth.6.poll-secret', 'ns.nonce.single-use'],
    arbitrary: fc.array(fc.constantFrom(...COMMANDS), { minLength: 1, maxLength: MAX_COMMANDS }),
    predicate: async (commands, ctx): Promise<PropertyVerdict> => {
      const s = new Session(target, ctx.signal);
      const run = new Run(s, await (identities ??= Promise.all([s.identity(), s.identity()])));
      const evidence = () => ({ commands: run.log, ...(s.evidence() as object) });
      try {
        run.log.push(`(setup) start: ${await run.start()}`);
        for (const cmd of commands) {
          if (!run.applies(cmd)) continue;
          const at = run.log.length;
          run.log.push(`${cmd}: …`);
          run.log[at] = `${cmd}: ${await run.step(cmd)}`;
        }
        return true;
      } catch (error) {
        if (!(error instanceof ModelMismatch)) throw error;
        run.log[run.log.length - 1] = run.log.at(-1)!.replace(/…$/, `MISMATCH: ${error.message}`);
        return { ok: false, detail: `${error.message}\nsequence run:\n  ${run.log.join('\n  ')}`, evidence: evidence() };
      } finally {
        await s.close();
      }
    },
  });
  // Modest by default: at most MAX_SEQUENCES sequences whatever --runs says for single-login properties.
  return [{ ...check, run: (ctx) => check.run({ ...ctx, runs: Math.min(ctx.runs, MAX_SEQUENCES) }) }];
}
