// `--report format=file` parsing and the file reporters it builds.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Reporter } from '../run/model.ts';
import { ConfigError } from '../run/exit.ts';
import { jsonReporter } from './json.ts';
import { junitReporter } from './junit.ts';
import { markdownReporter } from './markdown.ts';

export { consoleReporter, renderSummary, type ConsoleOptions, type Output } from './console.ts';
export { jsonReporter, renderJson } from './json.ts';
export { junitReporter, renderJUnit, escapeXml } from './junit.ts';
export { markdownReporter, renderMarkdown } from './markdown.ts';

export type ReportFormat = 'json' | 'junit' | 'md';
export interface ReportTarget {
  format: ReportFormat;
  file: string;
}

const FORMATS: readonly ReportFormat[] = ['json', 'junit', 'md'];

/**
 * Parses "json=FILE", "junit=FILE" or "md=FILE" and creates the file's parent directories now, so a
 * report that cannot be written fails the run before any check runs rather than after.
 */
export function parseReportOption(value: string): ReportTarget {
  const eq = value.indexOf('=');
  const format = eq === -1 ? value : value.slice(0, eq);
  const file = eq === -1 ? '' : value.slice(eq + 1);
  if (!(FORMATS as readonly string[]).includes(format) || file === '') {
    throw new ConfigError(`--report expects ${FORMATS.map((f) => `${f}=FILE`).join(' or ')}; got "${value}"`);
  }
  const path = resolve(file);
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (e) {
    throw new ConfigError(`cannot create the directory for report ${file}: ${(e as Error).message}`);
  }
  return { format: format as ReportFormat, file: path };
}

export function fileReporter(target: ReportTarget): Reporter {
  const make = { json: jsonReporter, junit: junitReporter, md: markdownReporter }[target.format];
  return make(target.file);
}
