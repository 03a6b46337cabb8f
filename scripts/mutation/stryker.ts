// One StrykerJS run over an area (or a sample of it): the command runner starts the area's
// checks against a fresh reference per mutant. The active mutant reaches the reference's child
// processes through Stryker's environment variable (__STRYKER_ACTIVE_MUTANT__), which the
// harness passes on when it spawns them (harness/run/spawn.ts).
import { mkdir, rm } from 'node:fs/promises';
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
  incremental?: boolean;
  /** A name for the report files (default: the area's). */
  label?: string;
  quiet?: boolean;
}

/** Which checks failed under each mutant of the last run of `label` (scripts/mutation/kill.mjs). */
export const killLog = (label: string): string => resolve(REPORTS, `${label}.kills.jsonl`);

export async function mutate(area: MutationArea, opts: RunOptions = {}): Promise<MutantResult[]> {
  const label = opts.label ?? area.name;
  await mkdir(REPORTS, { recursive: true });
  await rm(killLog(label), { force: true });
  const options: PartialStrykerOptions = {
    testRunner: 'command',
    commandRunner: { command: killCommand(area, killLog(label)) },
    mutate: opts.mutate ?? area.mutate,
    coverageAnalysis: 'off',
    concurrency: opts.concurrency ?? 2,
    incremental: opts.incremental ?? true,
    incrementalFile: `${INCREMENTAL}/${label}.json`,
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
  return new Stryker(options).runMutationTest();
}
