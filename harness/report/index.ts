// `--report format=file` parsing and the file reporters it builds.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Reporter, RuleEntry } from '../run/model.ts';
import { ConfigError } from '../run/exit.ts';
import { jsonReporter } from './json.ts';
import { junitReporter } from './junit.ts';
import { markdownReporter } from './markdown.ts';
import { htmlReporter } from './html.ts';

export { consoleReporter, renderSummary, type ConsoleOptions, type Output } from './console.ts';
export { jsonReporter, renderJson } from './json.ts';
export { junitReporter, renderJUnit, escapeXml } from './junit.ts';
export { markdownReporter, renderMarkdown } from './markdown.ts';
export { htmlReporter, renderHtml, escapeHtml } from './html.ts';

export type ReportFormat = 'json' | 'junit' | 'md' | 'html';
export interface ReportTarget {
  format: ReportFormat;
  file: string;
}

const FORMATS: readonly ReportFormat[] = ['json', 'junit', 'md', 'html'];

/**
 * Parses "json=FILE", "junit=FILE", "md=FILE" or "html=FILE" and creates the file's parent directories now, so a
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

export interface FileReportOptions {
  /** The rule catalogue: the HTML and Markdown reports quote each failed rule's text. */
  rules?: readonly RuleEntry[];
}

export function fileReporter(target: ReportTarget, options: FileReportOptions = {}): Reporter {
  const { file, format } = target;
  if (format === 'html') return htmlReporter(file, options);
  if (format === 'md') return markdownReporter(file, options);
  return format === 'json' ? jsonReporter(file) : junitReporter(file);
}
