// Test doubles for the harness tests: checks with fixed outcomes, a stand-in for the vectors
// suite (the real one lives in harness/suites/vectors), a small rule catalogue, memory streams.
import type { Check, CheckContext, Level, Outcome, RuleEntry, SuiteLoad } from '../../harness/run/model.ts';

export const catalogue: RuleEntry[] = [
  { id: 'ns.verify.1', level: 'MUST', doc: 1, section: 'Verification', title: 'Rule one' },
  { id: 'ns.verify.2', level: 'MUST', doc: 1, section: 'Verification', title: 'Rule two' },
  { id: 'ns.verify.10', level: 'MUST', doc: 1, section: 'Verification', title: 'Rule ten' },
  { id: 'ns.request.nonce', level: 'SHOULD', doc: 1, section: 'Request object', title: 'Nonce' },
  { id: 'ns.limits.clock', level: 'MAY', doc: 1, section: 'Limits', title: 'Clock skew' },
  { id: 'ob.subject', level: 'MUST', doc: 2, section: 'Subject', title: 'Subject' },
];

export function check(id: string, outcome: Outcome | ((ctx: CheckContext) => Outcome | Promise<Outcome>), opts: { rules?: string[]; level?: Level; suite?: string } = {}): Check {
  return {
    id,
    title: `title of ${id}`,
    suite: opts.suite ?? 'vectors',
    rules: opts.rules ?? ['ns.verify.1'],
    level: opts.level ?? 'MUST',
    run: typeof outcome === 'function' ? outcome : () => outcome,
  };
}

export const pass = (): Outcome => ({ status: 'passed' });
export const fail = (detail = 'expected 401, got 200'): Outcome => ({ status: 'failed', detail });
export const skip = (detail = 'needs a relay'): Outcome => ({ status: 'skipped', detail });

/** A mixed set like a vectors run: two source files, rules across levels. */
export function sampleChecks(): Check[] {
  return [
    check('vectors/poweur/signin.json#valid-identity', pass(), { rules: ['ns.verify.1', 'ns.verify.2'] }),
    check('vectors/poweur/signin.json#bad-signature', pass(), { rules: ['ns.verify.2'] }),
    check('vectors/poweur/signin.json#nonce-reuse', pass(), { rules: ['ns.request.nonce'], level: 'SHOULD' }),
    check('vectors/poweur/names.json#clock', pass(), { rules: ['ns.limits.clock'], level: 'MAY' }),
    check('vectors/poweur/names.json#ten', pass(), { rules: ['ns.verify.10'] }),
  ];
}

/** Stands in for harness/suites/vectors/index.ts `vectorSuite`. */
export function fakeVectorSuite(checks: Check[], extra: Partial<SuiteLoad> = {}) {
  const calls: Array<{ dirs: string[]; serviceName: string }> = [];
  const suite = async (options: { dirs: string[]; serviceName: string }): Promise<SuiteLoad> => {
    calls.push(options);
    return { checks, skipped: extra.skipped ?? [], coverageDocs: extra.coverageDocs ?? [1] };
  };
  return Object.assign(suite, { calls });
}

export class MemoryOutput {
  text = '';
  constructor(readonly isTTY = false) {}
  write(s: string): boolean {
    this.text += s;
    return true;
  }
}

export function io(extra: { signal?: AbortSignal } = {}) {
  return { stdout: new MemoryOutput(), stderr: new MemoryOutput(), env: {}, ...extra };
}
