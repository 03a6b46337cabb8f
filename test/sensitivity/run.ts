// `npm run sensitivity`: proven sensitivity. Each broken variant of the reference (variants.ts)
// runs against only the checks citing the rule it breaks; the rule is proven when one of them
// fails. Prints, per document, the observable MUST rules of the document (not project decisions,
// not marked unobservable) proven by a variant, the facets of its rules (spec/facets/) proven of
// those observable, the variants that survived (exit 1), and writes the proofs (each variant's
// failing checks) to harness/run/proofs.json with --write (the coverage table's "proven" columns).
// A facet is proven when a failing check claims one of its cells; a rule with facets only when
// each observable facet is (harness/matrix/proven.ts).
import { writeFile } from 'node:fs/promises';
import { format, resolveConfig } from 'prettier';
import { rules } from '../../schemas/ts/rules.ts';
import { facets } from '../../schemas/ts/facets.ts';
import { listChecks } from '../../harness/matrix/checks.ts';
import { provenSummary } from '../../harness/matrix/proven.ts';
import { readProofs, type Proof } from '../../harness/run/proofs.ts';
import { profileFor } from '../../protocol/common/profile.ts';
import { startAuthority } from '../../harness/actors/authority/index.ts';
import { runChecks } from '../../harness/run/runner.ts';
import { relaySuite } from '../../harness/suites/relay/index.ts';
import { driveSuite } from '../../harness/suites/drive/index.ts';
import { REFERENCE_DRIVE_QUOTA } from '../../harness/suites/drive/suite.ts';
import { startRelayReference } from '../../harness/suites/relay/launch.ts';
import { bridge, suiteArgs as bridgeArgs } from '../bridge/helpers.ts';
import { brokenRp, runCli, suiteArgs as rpArgs } from '../rp/helpers.ts';
import { VARIANTS, type Variant } from './variants.ts';
import { WIRE_ENV } from '../../reference/variants/wire.ts';

const BREAKAGE_ENV = { SVC_REFERENCE_ALLOW_BREAKAGE: '1' };
const PROOFS = new URL('../../harness/run/proofs.json', import.meta.url);

interface Outcome {
  variant: Variant;
  /** The checks citing the rule that failed against the variant. */
  failed: string[];
  ran: number;
  error?: string;
}

/** A --break flag, or a wire variant named in the environment (`wire:<name>`). */
function breakage(v: Variant): { extraArgs: string[]; env: NodeJS.ProcessEnv } {
  return v.breakage.startsWith('wire:')
    ? { extraArgs: [], env: { ...BREAKAGE_ENV, [WIRE_ENV]: `${v.suite}/${v.breakage.slice('wire:'.length)}` } }
    : { extraArgs: ['--break', v.breakage], env: BREAKAGE_ENV };
}

async function failedAgainst(v: Variant): Promise<{ failed: string[]; ran: number }> {
  if (v.suite === 'relay' || v.suite === 'drive') {
    const how = breakage(v);
    const run = await startRelayReference({ profile: profileFor(), ...how, ...(v.suite === 'drive' ? { extraArgs: [...how.extraArgs, '--drive-quota', String(REFERENCE_DRIVE_QUOTA)] } : {}) });
    try {
      const load = v.suite === 'drive' ? await driveSuite(run.target) : await relaySuite(run.target);
      const report = await runChecks(load.checks, { seed: 11, runs: 6, timeoutMs: 60_000, rules, profileGates: true, selection: { rules: [v.rule] } });
      return { failed: report.results.filter((r) => r.status === 'failed' || r.status === 'error').map((r) => r.id), ran: report.results.length };
    } finally {
      await run.stop();
    }
  }
  if (v.suite === 'bridge') {
    const how = breakage(v);
    const b = await bridge(how.extraArgs, how.env, { push: /^ob\.(push|contract\.push)/.test(v.rule), tls: v.tls === true });
    try {
      const run = await runCli([...(await bridgeArgs(b)), '--profile', '--rule', v.rule]);
      return { failed: run.failed, ran: run.report.results.length };
    } finally {
      await b.stop();
    }
  }
  const authority = await startAuthority();
  const rp = await brokenRp(v.breakage, authority, { tls: v.tls === true });
  try {
    const run = await runCli([...rpArgs(rp.origin, authority, rp.args), '--profile', '--rule', v.rule]);
    return { failed: run.failed, ran: run.report.results.length };
  } finally {
    await rp.close();
    await authority.close();
  }
}

/** Per document: observable MUST rules and observable facets proven; the project decisions proven. */
async function figures(proofs: readonly Proof[], note: string): Promise<string[]> {
  const summary = provenSummary(rules, facets, proofs, await listChecks());
  const lines = [`document  proven / observable MUST rules   proven / observable facets${note}`];
  for (const [doc, d] of Object.entries(summary.documents)) {
    const share = d.rules.observable > 0 ? ` (${((100 * d.rules.proven) / d.rules.observable).toFixed(1)} %)` : '';
    lines.push(`doc ${doc}     ${`${String(d.rules.proven).padStart(4)} / ${d.rules.observable}${share}`.padEnd(29)}${String(d.facets.proven).padStart(4)} / ${d.facets.observable}`);
  }
  lines.push(`project decisions proven: ${summary.project}`);
  return lines;
}

async function main(): Promise<number> {
  const write = process.argv.includes('--write');
  // --summary [FILE]: the figures of recorded proofs (default harness/run/proofs.json), no variant run.
  const at = process.argv.indexOf('--summary');
  if (at >= 0) {
    const file = process.argv[at + 1] !== undefined && !process.argv[at + 1]!.startsWith('--') ? process.argv[at + 1]! : PROOFS;
    process.stdout.write(`${(await figures(readProofs(file), '')).join('\n')}\n`);
    return 0;
  }
  const only = process.argv.filter((a) => !a.startsWith('--')).slice(2);
  // Arguments select by suite or by breakage (`rp`, `wire:metadata-version`, `wire:`).
  const variants = VARIANTS.filter((v) => only.length === 0 || only.some((o) => o === v.suite || v.breakage.startsWith(o)));
  const outcomes: Outcome[] = [];
  // Two variants at a time (2 cores): each starts its own servers and authority.
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < variants.length) {
      const v = variants[next++]!;
      const t0 = Date.now();
      try {
        outcomes.push({ variant: v, ...(await failedAgainst(v)) });
      } catch (error) {
        outcomes.push({ variant: v, failed: [], ran: 0, error: (error as Error).message });
      }
      const o = outcomes.at(-1)!;
      process.stderr.write(
        `${o.failed.length > 0 ? 'proven  ' : 'SURVIVED'} ${v.suite} --break ${v.breakage} (${v.rule}): ${o.failed.join(', ') || o.error || `${o.ran} checks passed`} [${Math.round((Date.now() - t0) / 1000)} s]\n`,
      );
    }
  };
  await Promise.all([worker(), worker()]);

  const found: Proof[] = outcomes.filter((o) => o.failed.length > 0).map((o) => ({ rule: o.variant.rule, suite: o.variant.suite, variant: o.variant.breakage, checks: o.failed.sort() }));
  // A partial run (suites or breakages named) adds to the proofs the other variants left.
  const ran = new Set(variants.map((v) => `${v.suite} ${v.breakage}`));
  const kept = only.length === 0 ? [] : readProofs(PROOFS).filter((p) => !ran.has(`${p.suite} ${p.variant}`) && VARIANTS.some((v) => v.suite === p.suite && v.breakage === p.variant));
  const proofs = [...kept, ...found].sort((a, b) => a.rule.localeCompare(b.rule) || a.variant.localeCompare(b.variant));
  const lines = await figures(proofs, only.length === 0 ? '' : ' (this run with the proofs of the variants not run)');
  const survivors = outcomes.filter((o) => o.failed.length === 0);
  lines.push(survivors.length === 0 ? 'no variant survived' : `survived: ${survivors.map((o) => `${o.variant.suite} --break ${o.variant.breakage} (${o.variant.rule})`).join('; ')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  // Formatted as `npm run lint` expects, so a --write never turns the lint red.
  const json = JSON.stringify({ generated_by: 'npm run sensitivity -- --write', proofs });
  if (write) await writeFile(PROOFS, await format(json, { parser: 'json', ...(await resolveConfig(PROOFS.pathname)) }));
  return survivors.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`sensitivity: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(2);
  },
);
