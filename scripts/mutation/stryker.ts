// One StrykerJS run over an area (or a sample of it): the command runner starts the area's
// checks against a fresh reference per mutant. The active mutant reaches the reference's child
// processes through Stryker's environment variable (__STRYKER_ACTIVE_MUTANT__), which the
// harness passes on when it spawns them (harness/run/spawn.ts).
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Stryker } from '@stryker-mutator/core';
import type { MutantResult, PartialStrykerOptions } from '@stryker-mutator/api/core';
import { killCommand, type MutationArea } from './areas.ts';

export const REPORTS = 'reports/mutation';
/** Committed beside the triage: a rerun tests only the mutants whose code or checks changed. */
export const INCREMENTAL = 'test/mutation/incremental';

export interface RunOptions {
  /** Stryker ranges to mutate instead of the area's files (the sample). */
  mutate?: string[];
  concurrency?: number;
  /** Keep and reuse an incremental file (default true; the sample tests from scratch). */
  incremental?: boolean;
  /** Test every mutant again (the incremental file is still written). */
  force?: boolean;
  /** Test again only the mutants the incremental file records as surviving: after checks were added. */
  retestSurvivors?: boolean;
  /** A name for the report files (default: the area's). */
  label?: string;
  quiet?: boolean;
}

/** Which checks failed under each mutant of the last run of `label` (scripts/mutation/kill.mjs). */
export const killLog = (label: string): string => resolve(REPORTS, `${label}.kills.jsonl`);

/**
 * Drops the surviving mutants from an incremental file, so the next run tests them again and
 * reuses the rest: the command runner tells Stryker nothing about which checks a mutant meets, so
 * Stryker cannot see that checks were added.
 */
async function forgetSurvivors(file: string): Promise<void> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return;
  const report = JSON.parse(text) as { files: Record<string, { mutants: Array<{ status: string }> }> };
  for (const f of Object.values(report.files)) f.mutants = f.mutants.filter((m) => m.status !== 'Survived' && m.status !== 'NoCoverage');
  await writeFile(file, JSON.stringify(report));
}

export async function mutate(area: MutationArea, opts: RunOptions = {}): Promise<MutantResult[]> {
  const label = opts.label ?? area.name;
  await mkdir(REPORTS, { recursive: true });
  await rm(killLog(label), { force: true });
  const incrementalFile = `${INCREMENTAL}/${label}.json`;
  if (opts.retestSurvivors) await forgetSurvivors(incrementalFile);
  const options: PartialStrykerOptions = {
    testRunner: 'command',
    commandRunner: { command: killCommand(area, killLog(label)) },
    mutate: opts.mutate ?? area.mutate,
    coverageAnalysis: 'off',
    concurrency: opts.concurrency ?? 2,
    incremental: opts.incremental ?? true,
    force: opts.force ?? false,
    incrementalFile,
    reporters: opts.quiet ? ['html', 'json'] : ['html', 'json', 'progress', 'clear-text'],
    htmlReporter: { fileName: `${REPORTS}/${label}.html` },
    jsonReporter: { fileName: `${REPORTS}/${label}.json` },
    clearTextReporter: { reportTests: false, reportMutants: true, reportScoreTable: true },
    tempDirName: '.stryker-tmp',
    // A mutant that hangs the reference is killed by the checks' own limits first (60 s each).
    timeoutMS: 180_000,
    timeoutFactor: 1.5,
    disableTypeChecks: `{${area.mutate.join(',')}}`,
    // Stryker types its levels as a const enum, which isolated modules cannot import.
    logLevel: (opts.quiet ? 'error' : 'info') as PartialStrykerOptions['logLevel'],
    fileLogLevel: 'off' as PartialStrykerOptions['fileLogLevel'],
    thresholds: { high: 90, low: 80, break: null },
    cleanTempDir: true,
  };
  const results = await new Stryker(options).runMutationTest();
  if (options.incremental) await compact(incrementalFile);
  return results;
}

/**
 * Drops each mutant's statusReason (the whole run's output, kilobytes each) from a committed
 * incremental file: Stryker's diff reads sources, places and statuses, and the kills are kept
 * apart (`<label>.kills.json`).
 */
async function compact(file: string): Promise<void> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return;
  const report = JSON.parse(text) as { files: Record<string, { mutants: Array<{ statusReason?: string }> }> };
  for (const f of Object.values(report.files)) for (const m of f.mutants) delete m.statusReason;
  await writeFile(file, JSON.stringify(report));
}
