// The JSON report: the RunReport as is, for machines (dashboards, `rules --uncovered-from`).
import type { Reporter, RunReport } from '../run/model.ts';
import { writeFileAtomic } from './write.ts';

export function renderJson(report: RunReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

export function jsonReporter(file: string): Reporter {
  return { onEnd: (report) => writeFileAtomic(file, renderJson(report)) };
}
