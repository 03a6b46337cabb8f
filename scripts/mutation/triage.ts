// How a surviving mutant is judged. Three kinds are judged by their place in the code, the same
// way for every module, so nobody picks survivors one by one: a mutant that only changes an error's
// free-form detail text (no document states it: unobservable), also through a local helper that
// passes its parameter on as the detail (`const missing = (detail) => new HttpError(...)`); one
// that only changes a log line (never on the wire: unobservable); and one that only changes the
// rule id an error envelope names (a project decision, judged by profile checks, not document checks).
// Every other survivor needs a line in test/mutation/triage.yaml (equivalent, unobservable or
// profile, with the reason), or a check that kills it.
import { readFile } from 'node:fs/promises';
import ts from 'typescript';
import { parse } from 'yaml';
import type { MutantResult } from '@stryker-mutator/api/core';

export type Verdict = 'equivalent' | 'unobservable' | 'profile';

export interface TriageEntry {
  file: string;
  line: number;
  /** Only when mutants of one line share a mutator and a replacement: the mutant's first column. */
  column?: number;
  /** Only when two such mutants also share their first column (a condition and its first operand): the mutant's last column. */
  end?: number;
  mutator: string;
  replacement: string;
  /** `profile`: the mutant changes only a project decision no document states (counted apart, like the envelope's rule). */
  verdict: Verdict;
  reason: string;
}

/** The error constructors of reference/ and where their detail and rule arguments sit. */
const ERRORS: Record<string, { detail: number; rule: number }> = {
  ruleError: { detail: 2, rule: 1 },
  HttpError: { detail: 2, rule: 3 },
  OAuthError: { detail: 2, rule: 3 },
  // The bridge's error page before the client is known (reference/bridge/responses.ts).
  pageError: { detail: 2, rule: 3 },
  // The bridge's client errors, whose message becomes the answer's detail (token.ts, flow.ts); a
  // client authentication error names no rule of its own (-1): the token endpoint names it.
  ClientAuthError: { detail: 0, rule: -1 },
  UrlClientError: { detail: 0, rule: 1 },
};

const sources = new Map<string, ts.SourceFile>();

/** `file` parsed from `text` (the source the mutants were made of) or, without it, as it is on disk. */
async function source(file: string, text?: string): Promise<ts.SourceFile> {
  const key = text === undefined ? file : `${file}\0${text}`;
  let s = sources.get(key);
  if (!s) {
    s = ts.createSourceFile(file, text ?? (await readFile(file, 'utf8')), ts.ScriptTarget.Latest, true);
    sources.set(key, s);
  }
  return s;
}

/**
 * Mutators whose mutant, inside a detail or log argument, changes only the text it computes (an
 * optional chain made plain could throw instead, so it is not one of them).
 */
const TEXT_MUTATORS = new Set(['StringLiteral', 'ConditionalExpression', 'EqualityOperator', 'LogicalOperator', 'ArithmeticOperator', 'BooleanLiteral', 'ArrayDeclaration']);

/** Calls that only build text from their receiver and arguments (a detail's `${[...KINDS].join(', ')}`). */
const TEXT_CALLS = /\.join$/;

/** Calls that write a log line: what they are given never reaches the wire. */
const LOGS = /(^|\.)(log|#log|warn|info|debug)$/;

/** Where an error constructor takes its detail and rule, or a local helper its detail (`const missing = (d) => new HttpError(400, c, d, r)`). */
function placesOf(callee: string, sf: ts.SourceFile): { detail: number; rule: number } | 'log' | undefined {
  if (callee in ERRORS) return ERRORS[callee];
  if (LOGS.test(callee)) return 'log';
  let found: { detail: number; rule: number } | undefined;
  // The helper's parameters passed on as the detail, and as the rule (`bad(detail, rule = ...)`).
  const passedOn = (f: ts.SignatureDeclarationBase, body: ts.Node | undefined): void => {
    if (!body || !(ts.isCallExpression(body) || ts.isNewExpression(body)) || !(body.expression.getText(sf) in ERRORS)) return;
    const place = ERRORS[body.expression.getText(sf)]!;
    const params = f.parameters.map((p) => p.name.getText(sf));
    const param = (at: number) => {
      const arg = body.arguments?.[at]?.getText(sf);
      return arg === undefined ? -1 : params.indexOf(arg);
    };
    if (param(place.detail) >= 0) found = { detail: param(place.detail), rule: param(place.rule) };
  };
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (ts.isVariableDeclaration(n) && n.name.getText(sf) === callee && n.initializer && ts.isArrowFunction(n.initializer) && !ts.isBlock(n.initializer.body)) {
      passedOn(n.initializer, n.initializer.body);
    }
    // A declared helper that ends by returning an error constructor's answer (flow.ts's `answer`).
    if (ts.isFunctionDeclaration(n) && n.name?.getText(sf) === callee && n.body) {
      const last = n.body.statements.at(-1);
      if (last && ts.isReturnStatement(last)) passedOn(n, last.expression);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

/** The argument of an error constructor, a helper wrapping one, or a log call the node sits in, if any. */
function errorArgument(node: ts.Node, sf: ts.SourceFile): { place: { detail: number; rule: number } | 'log'; index: number; end: number } | undefined {
  for (let n: ts.Node = node; n.parent; n = n.parent) {
    const p = n.parent;
    if ((ts.isCallExpression(p) || ts.isNewExpression(p)) && p.arguments?.includes(n as ts.Expression)) {
      const callee = p.expression.getText(sf);
      if (ts.isCallExpression(p) && TEXT_CALLS.test(callee)) continue;
      const place = placesOf(callee, sf);
      return place ? { place, index: p.arguments.indexOf(n as ts.Expression), end: n.getEnd() } : undefined;
    }
    if (ts.isBlock(p) || ts.isSourceFile(p)) return undefined;
  }
  return undefined;
}

/** The judgement by place, for a mutant of a string (or template) inside an error's detail or rule argument. */
export async function byPlace(m: MutantResult, file: string, text?: string): Promise<{ verdict: Verdict; reason: string } | undefined> {
  if (!TEXT_MUTATORS.has(m.mutatorName)) return undefined;
  const sf = await source(file, text);
  const pos = sf.getPositionOfLineAndCharacter(m.location.start.line - 1, m.location.start.column - 1);
  const end = sf.getPositionOfLineAndCharacter(m.location.end.line - 1, m.location.end.column - 1);
  let node: ts.Node | undefined;
  const visit = (n: ts.Node): void => {
    if (n.getStart(sf) <= pos && pos < n.getEnd()) {
      node = n;
      ts.forEachChild(n, visit);
    }
  };
  visit(sf);
  if (!node) return undefined;
  const arg = errorArgument(node, sf);
  if (!arg || end > arg.end) return undefined;
  if (arg.place === 'log') return { verdict: 'unobservable', reason: 'a log line never reaches the wire' };
  const place = arg.place;
  if (arg.index === place.detail) return { verdict: 'unobservable', reason: "an error's detail text is free-form: no document states it" };
  if (arg.index === place.rule && m.mutatorName === 'StringLiteral') return { verdict: 'profile', reason: 'the rule an error envelope names is a project decision (profile checks)' };
  return undefined;
}

export async function loadTriage(): Promise<TriageEntry[]> {
  const text = await readFile(new URL('../../test/mutation/triage.yaml', import.meta.url), 'utf8').catch(() => '');
  return (parse(text) as TriageEntry[] | null) ?? [];
}

export const sameMutant = (t: TriageEntry, m: MutantResult): boolean =>
  m.fileName.endsWith(t.file) &&
  m.location.start.line === t.line &&
  (t.column === undefined || m.location.start.column === t.column) &&
  (t.end === undefined || m.location.end.column === t.end) &&
  m.mutatorName === t.mutator &&
  (m.replacement ?? '') === t.replacement;
