// Authenticated, schema-driven robustness (what Schemathesis does, past the front doors it cannot
// sign): for every operation of a suite's OpenAPI file, each single mutation and then random draws
// of them, the suite's front door signs the request or attaches its cookies, and the answer is
// judged. One property run feeds two checks: the document's (no 5xx but those the document gives,
// the error envelope, the server still answers, nothing accepted before is lost) and the
// profile's (only statuses the OpenAPI file lists). Shrunk and replayable like every property.
import fc from 'fast-check';
import type { RuleId } from '../../schemas/ts/rules.ts';
import { cite } from '../run/cite.ts';
import type { Check, CheckContext, Outcome } from '../run/model.ts';
import { propertyCheck } from '../run/property.ts';
import { MUTATIONS, bytesOf, mangleCredentials, mutate, pathOf, type Draft, type Mutation } from './mutations.ts';
import type { Operation } from './operations.ts';

/** What a suite gives the fuzzer: valid drafts, the authentication of a final request, and its guards. */
export interface FrontDoor {
  base: string;
  operations: Operation[];
  /** A valid request of `op` (fresh identities, envelopes, cookies as needed). */
  draft(op: Operation): Promise<Draft>;
  /** The headers that get this exact request past authentication (a signature over these bytes, cookies). */
  open(op: Operation, path: string, body: Uint8Array | undefined, draft: Draft): Promise<Record<string, string>>;
  cap(op: Operation): number | undefined;
  /** Before the fuzz: something accepted (mail, a sign-in); after it, a problem when it was lost. */
  keep(): Promise<() => Promise<string | undefined>>;
  /** A problem when the server no longer answers. */
  alive(): Promise<string | undefined>;
  /** True when an error answer is in the envelope the documents give (default: `{error, detail}`). */
  envelope?(text: string): boolean;
  /** The URL of a request (default base + path): a target that publishes its URLs maps the file's paths to them. */
  url?(op: Operation, path: string): string;
  /** Sends a final request (default: a plain fetch); a browser's client attaches its cookies. */
  request?(method: string, url: string, headers: Record<string, string>, body: Uint8Array | undefined, signal: AbortSignal): Promise<{ status: number; text: string }>;
}

/** Check ids when not `<suite>/fuzz/document` and `<suite>/profile/fuzz-statuses`. */
export interface FuzzRules {
  ids?: { document: string; profile: string };
  /** Document: no 5xx the document does not give; the error envelope. */
  document: RuleId[];
  /** Profile: only statuses the OpenAPI file lists. */
  profile: RuleId[];
}

interface Answer {
  op: string;
  mutation: Mutation;
  status: number;
  error?: string;
  envelope: boolean;
}

interface Case {
  op: number;
  mutation: Mutation;
  pick: number;
}

/** The documents' error envelope `{error, detail}`. */
function inEnvelope(text: string): boolean {
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    return typeof j.error === 'string' && typeof j.detail === 'string';
  } catch {
    return false;
  }
}

/** Fuzz runs per property when the run does not set --fuzz-runs. */
export const DEFAULT_FUZZ_RUNS = 60;

async function send(door: FrontDoor, c: Case, signal: AbortSignal): Promise<Answer> {
  const op = door.operations[c.op % door.operations.length]!;
  const draft = mutate(await door.draft(op), c.mutation, c.pick, door.cap(op));
  const path = pathOf(op.path, draft);
  const type = draft.contentType ?? op.bodyTypes[0] ?? 'application/json';
  const body = op.bodyTypes.length > 0 || op.method !== 'GET' ? bytesOf(draft, type) : undefined;
  const opened = { accept: 'application/json', ...(body !== undefined ? { 'content-type': type } : {}), ...(await door.open(op, path, body, draft)) };
  const headers = c.mutation === 'malformed-credentials' ? mangleCredentials(opened, c.pick) : opened;
  try {
    const timed = AbortSignal.any([signal, AbortSignal.timeout(20_000)]);
    const url = door.url ? door.url(op, path) : `${door.base}${path}`;
    const res = door.request
      ? await door.request(op.method, url, headers, body, timed)
      : await fetch(url, { method: op.method, headers, ...(body !== undefined ? { body: Buffer.from(body) } : {}), redirect: 'manual', signal: timed }).then(async (r) => ({
          status: r.status,
          text: await r.text(),
        }));
    const text = res.text;
    const envelope = res.status < 400 || (door.envelope ?? inEnvelope)(text);
    return { op: op.id, mutation: c.mutation, status: res.status, envelope };
  } catch (error) {
    return { op: op.id, mutation: c.mutation, status: 0, error: (error as Error).message, envelope: false };
  }
}

/** The two checks of a suite's fuzz: `<suite>/fuzz/document` and `<suite>/profile/fuzz-statuses`. */
export function fuzzChecks(suite: string, rules: FuzzRules, door: () => Promise<FrontDoor>): Check[] {
  const answers: Answer[] = [];
  const listed = new Map<string, number[]>();
  const arbitrary = (n: number) => fc.record({ op: fc.nat({ max: Math.max(0, n - 1) }), mutation: fc.constantFrom<Mutation>(...MUTATIONS), pick: fc.nat({ max: 16 }) });
  const ids = rules.ids ?? { document: `${suite}/fuzz/document`, profile: `${suite}/profile/fuzz-statuses` };
  const doc = cite(ids.document, rules.document);
  // The property, run once for both checks (whichever is selected first runs it).
  let running: Promise<Outcome> | undefined;
  const run = (ctx: CheckContext): Promise<Outcome> => (running ??= fuzz(ctx));
  const fuzz = async (ctx: CheckContext): Promise<Outcome> => {
    const opened = await door();
    const lost = await opened.keep();
    const examples = opened.operations.flatMap((_op, op) => MUTATIONS.map((mutation): Case => ({ op, mutation, pick: op })));
    const property = propertyCheck<Case>({
      id: ids.document,
      title: '',
      suite,
      rules: doc.rules,
      level: doc.level,
      arbitrary: arbitrary(opened.operations.length),
      // Every operation with every mutation first, then random draws on top.
      examples,
      predicate: async (c, pctx) => {
        const op = opened.operations[c.op % opened.operations.length]!;
        const a = await send(opened, c, pctx.signal);
        answers.push(a);
        listed.set(op.id, op.statuses);
        if (a.status === 0) return { ok: false, detail: `${a.op} with ${a.mutation}: no answer (${a.error})`, evidence: a };
        if (a.status >= 500 && !op.statuses.includes(a.status)) return { ok: false, detail: `${a.op} with ${a.mutation}: ${a.status}, a 5xx the document does not give`, evidence: a };
        if (a.status >= 400 && !a.envelope) return { ok: false, detail: `${a.op} with ${a.mutation}: ${a.status} without the error envelope {error, detail}`, evidence: a };
        return true;
      },
    });
    // fast-check counts the examples among the runs: the random draws come on top of them.
    const outcome = await property.run({ ...ctx, runs: examples.length + (ctx.fuzzRuns ?? DEFAULT_FUZZ_RUNS) });
    const after = [await opened.alive(), await lost()].filter((p): p is string => p !== undefined);
    if (after.length === 0) return outcome;
    return {
      status: 'failed',
      detail: [...(outcome.status === 'failed' ? [outcome.detail ?? ''] : []), ...after].join('\n'),
      ...(outcome.evidence !== undefined ? { evidence: outcome.evidence } : {}),
    };
  };
  const profile = cite(ids.profile, rules.profile);
  return [
    {
      id: ids.document,
      title:
        'every operation, valid and singly mutated past its authentication: no 5xx the document does not give, errors in the envelope; afterwards the server answers and nothing accepted before is lost',
      suite,
      ...doc,
      timeoutMs: 240_000,
      run: (ctx) => run(ctx),
    },
    {
      id: ids.profile,
      title: 'the same requests are answered only with statuses the OpenAPI file lists for each operation',
      suite,
      ...profile,
      timeoutMs: 240_000,
      run: async (ctx) => {
        await run(ctx);
        const off = answers.filter((a) => a.status !== 0 && !(listed.get(a.op) ?? []).includes(a.status));
        if (off.length === 0) return { status: 'passed', detail: `${answers.length} answers, all listed` };
        const groups = new Map<string, Set<string>>();
        for (const a of off) groups.set(`${a.op} ${a.status}`, (groups.get(`${a.op} ${a.status}`) ?? new Set()).add(a.mutation));
        const shown = [...groups].map(([k, m]) => `${k} (${[...m].join(', ')})`);
        return { status: 'failed', detail: `${off.length} of ${answers.length} answers have a status the OpenAPI file does not list: ${shown.join('; ')}` };
      },
    },
  ];
}
