// The HTML report (`--report html=FILE`): one self-contained page for a person reading a CI
// artifact, as the OpenID Foundation's suite gives each test a log page. No network: the style and
// the filter script are inline, and a Content-Security-Policy forbids loading anything. Every
// text from a run (a target's body, headers, a check's detail) is escaped: a target's answer is
// hostile input, so nothing it sends can become markup or script here.
import type { Exchange } from '../actors/http.ts';
import type { CheckResult, Reporter, RuleEntry, RunReport } from '../run/model.ts';
import { countResults } from '../run/summary.ts';
import { curlOf, exchangeLine, exchangesOf, failingExchange, needsAction, notesOf, propertyOf, reasonOf, rulesOf } from './exchanges.ts';
import { groupBy } from './groups.ts';
import { writeFileAtomic } from './write.ts';

/** Escapes text for HTML content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const e = escapeHtml;
/** Bodies longer than this are folded: the start shown, the rest one click away. */
const FOLD_CHARS = 1200;

export interface HtmlOptions {
  /** The rule catalogue (schemas/ts/rules.ts): each failure shows its rules' text. */
  rules?: readonly RuleEntry[];
}

export function renderHtml(report: RunReport, options: HtmlOptions = {}): string {
  const { summary } = report;
  const verdict = summary.interrupted ? 'interrupted' : summary.failed + summary.errors > 0 ? 'failed' : summary.total === 0 ? 'nothing tested' : 'passed';
  const title = `${report.tool.name} ${report.tool.version}: ${verdict}`;
  const acting = report.results.filter(needsAction);
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)}</title>
<style>${STYLE}</style></head>
<body>
<header><h1 class="v-${verdict.replace(/ /g, '-')}">${e(title)}</h1>
<p>Seed ${summary.seed}, ${(summary.durationMs / 1000).toFixed(1)} s, started ${e(summary.startedAt)}. ${summary.passed} passed, ${summary.failed} failed, ${summary.errors} error(s), ${summary.skipped} skipped${summary.expectedFailures ? `, ${summary.expectedFailures} expected failure(s)` : ''}.</p></header>
<main>
${summaryTables(report)}
${coverageTable(report)}
<section id="results"><h2>Checks</h2>
${filters(report, acting.length > 0)}
<p id="shown"></p>
${report.results.map((r) => resultCard(r, options.rules ?? [], acting.includes(r))).join('\n')}
</section>
</main>
<script>${SCRIPT}</script>
</body></html>
`;
}

function summaryTables(report: RunReport): string {
  const rows: string[] = [];
  const profileRows: string[] = [];
  for (const [suite, results] of groupBy(report.results, (r) => r.suite)) {
    const docs = results.filter((r) => !r.profile);
    const c = countResults(docs);
    rows.push(`<tr><td>${e(suite)}</td>${[c.passed, c.failed, c.errors, c.skipped, c.expected].map(num).join('')}</tr>`);
    const profile = results.filter((r) => r.profile);
    if (profile.length === 0) continue;
    const count = (s: string) => profile.filter((r) => r.status === s).length;
    const gating = profile.every((r) => r.gating) ? 'gates' : 'does not gate';
    profileRows.push(`<tr><td>${e(suite)}</td>${[count('passed'), count('failed') + count('error'), count('skipped')].map(num).join('')}<td>${gating}</td></tr>`);
  }
  const profile =
    profileRows.length === 0
      ? ''
      : `<h2>Project profile</h2><p>Decisions the documents leave open (statuses, codes, envelope fields): counted apart; they fail a run only when the profile gates (<code>--profile</code>).</p>
<table><thead><tr><th>suite</th><th>passed</th><th>differ</th><th>skipped</th><th>profile</th></tr></thead><tbody>${profileRows.join('')}</tbody></table>`;
  return `<section id="summary"><h2>Document checks per suite</h2>
<table><thead><tr><th>suite</th><th>passed</th><th>failed</th><th>errors</th><th>skipped</th><th>expected failures</th></tr></thead><tbody>${rows.join('')}</tbody></table>
${profile}</section>`;
}

const num = (n: number): string => `<td class="n${n > 0 ? '' : ' zero'}">${n}</td>`;

/** Known per-document fields; anything else the coverage carries (the rule matrix) is shown as it comes. */
const KNOWN_DOC_FIELDS = new Set(['covered', 'proven', 'unobservable', 'uncovered', 'profile']);
const KNOWN_COVERAGE_FIELDS = new Set(['docs', 'rules', 'documents', 'covered', 'uncovered', 'unknown']);

function figure(v: unknown): string {
  if (Array.isArray(v)) return String(v.length);
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return String(v);
  if (v !== null && typeof v === 'object') {
    return Object.entries(v)
      .map(([k, x]) => `${k} ${figure(x)}`)
      .join(', ');
  }
  return '';
}

function coverageTable(report: RunReport): string {
  const docs = Object.entries(report.coverage.documents ?? {});
  if (docs.length === 0) return '';
  const extra = [...new Set(docs.flatMap(([, d]) => Object.keys(d).filter((k) => !KNOWN_DOC_FIELDS.has(k))))];
  const head = ['document', 'covered', 'proven', 'unobservable', 'uncovered', 'profile decisions covered', ...extra];
  const rows = docs.map(([doc, c]) => {
    const total = c.covered.length + c.unobservable.length + c.uncovered.length;
    const cells = [
      `document ${doc}`,
      `${c.covered.length}/${total}`,
      `${(c.proven ?? []).length}/${total}`,
      String(c.unobservable.length),
      String(c.uncovered.length),
      `${c.profile.covered.length}/${c.profile.covered.length + c.profile.uncovered.length}`,
      ...extra.map((k) => figure((c as unknown as Record<string, unknown>)[k])),
    ];
    const lists = [
      list('covered', c.covered),
      list('uncovered', c.uncovered),
      list(
        'unobservable over the wire',
        c.unobservable.map((u) => `${u.id}: ${u.reason}`),
      ),
      list('proven by a broken variant', c.proven ?? []),
    ].join('');
    return `<tr>${cells.map((x, i) => (i === 0 ? `<td>${e(x)}${lists}</td>` : `<td class="n">${e(x)}</td>`)).join('')}</tr>`;
  });
  const more = Object.entries(report.coverage as unknown as Record<string, unknown>).filter(([k]) => !KNOWN_COVERAGE_FIELDS.has(k));
  const moreRows = more.length === 0 ? '' : `<h3>More coverage figures</h3><dl>${more.map(([k, v]) => `<dt>${e(k)}</dt><dd>${e(figure(v))}</dd>`).join('')}</dl>`;
  return `<section id="coverage"><h2>Rule coverage per document</h2>
<table><thead><tr>${head.map((h) => `<th>${e(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>${moreRows}</section>`;
}

function list(label: string, items: readonly string[]): string {
  if (items.length === 0) return '';
  return `<details><summary>${e(label)} (${items.length})</summary><ul>${items.map((i) => `<li><code>${e(i)}</code></li>`).join('')}</ul></details>`;
}

function filters(report: RunReport, anyToAct: boolean): string {
  const options = (values: Iterable<string>) =>
    [...new Set(values)]
      .sort()
      .map((v) => `<option value="${e(v)}">${e(v)}</option>`)
      .join('');
  return `<form id="filters" onsubmit="return false">
<label>suite <select id="f-suite"><option value="">all</option>${options(report.results.map((r) => r.suite))}</select></label>
<label>status <select id="f-status"><option value=""${anyToAct ? '' : ' selected'}>all</option><option value="act"${anyToAct ? ' selected' : ''}>failed or error</option>${options(report.results.map(statusOf))}</select></label>
<label>level <select id="f-level"><option value="">all</option>${options(report.results.map((r) => r.level))}</select></label>
<label>kind <select id="f-kind"><option value="">all</option><option value="document">document checks</option><option value="profile">profile checks</option></select></label>
<label>rule <input id="f-rule" type="search" placeholder="ns.verify.6" list="rule-ids"></label>
<datalist id="rule-ids">${options(report.results.flatMap((r) => r.rules))}</datalist>
</form>`;
}

/** The status a reader filters on: an expected failure and a profile difference that does not gate are their own. */
function statusOf(r: CheckResult): string {
  if (r.status === 'failed' && r.expected === 'failure') return 'expected failure';
  if (r.gating === false && (r.status === 'failed' || r.status === 'error')) return 'profile difference';
  return r.status;
}

function resultCard(r: CheckResult, catalogue: readonly RuleEntry[], acting: boolean): string {
  const status = statusOf(r);
  const reason = reasonOf(r);
  const attrs = [
    `data-suite="${e(r.suite)}"`,
    `data-status="${e(status)}"`,
    `data-act="${acting ? '1' : ''}"`,
    `data-level="${e(r.level)}"`,
    `data-kind="${r.profile ? 'profile' : 'document'}"`,
    `data-rules="${e(r.rules.join(' '))}"`,
  ].join(' ');
  const head = `<summary><span class="badge s-${e(status.replace(/ /g, '-'))}">${e(status)}</span>${reason ? ` <span class="code" title="reason code">${e(reason)}</span>` : ''} <code>${e(r.id)}</code> <span class="title">${e(r.title)}</span> <span class="meta">${e(r.level)}${r.profile ? ', profile' : ''}, ${Math.round(r.durationMs)} ms</span></summary>`;
  if (!acting && r.status !== 'failed') {
    const detail = r.detail ? `<p class="detail">${e(r.detail)}</p>` : '';
    return `<details class="result" ${attrs}>${head}${detail}${ruleList(r, catalogue)}</details>`;
  }
  return `<details class="result failure" open ${attrs}>${head}<div class="body">
${ruleList(r, catalogue)}
<h4>${r.status === 'error' ? 'Why there is no verdict' : 'What the target answered'}</h4><pre class="detail">${e(r.detail || '(no detail)')}</pre>
${r.expectedReason !== undefined ? `<p>Expected failure: ${e(r.expectedReason)}</p>` : ''}
${attemptsOf(r)}
${propertyBlock(r)}
${notesBlock(r)}
${exchangesBlock(exchangesOf(r.evidence))}
${r.log?.length ? `<details><summary>check log (${r.log.length} lines)</summary><pre>${e(r.log.join('\n'))}</pre></details>` : ''}
</div></details>`;
}

function ruleList(r: CheckResult, catalogue: readonly RuleEntry[]): string {
  if (r.rules.length === 0) return '';
  const items = rulesOf(r, catalogue).map(
    (x) => `<li><code>${e(x.id)}</code> <b>${e(x.level)}</b> <span class="meta">${e(x.where)}</span>${x.title ? ` ${e(x.title)}` : ''}${x.text ? `<blockquote>${e(x.text)}</blockquote>` : ''}</li>`,
  );
  return `<h4>Rules</h4><ul class="rules">${items.join('')}</ul>`;
}

function attemptsOf(r: CheckResult): string {
  if (!r.attempts?.length) return '';
  const items = r.attempts.map((a, i) => `<li>attempt ${i + 1}: ${e(a.status)} ${e(a.code ?? a.cause ?? '')}, while ${e(a.environment.join('; '))}<pre>${e(a.detail)}</pre></li>`);
  return `<h4>Earlier attempts (the environment failed during them)</h4><ul>${items.join('')}</ul>`;
}

function propertyBlock(r: CheckResult): string {
  const p = propertyOf(r.evidence);
  if (!p) return '';
  return `<h4>Property counterexample</h4>
<p>Seed ${p.seed}, path <code>${e(p.path)}</code>, ${p.numShrinks} shrink(s). The shrunk counterexample:</p>
<pre>${e(p.counterexample)}</pre>
<p>Replay exactly this case:</p><pre class="cmd">${e(p.replay)}</pre>`;
}

function notesBlock(r: CheckResult): string {
  const notes = notesOf(r.evidence);
  return notes.length === 0 ? '' : `<h4>Notes</h4><ul>${notes.map((n) => `<li>${e(n)}</li>`).join('')}</ul>`;
}

function exchangesBlock(exchanges: readonly Exchange[]): string {
  if (exchanges.length === 0) return '<p class="meta">No HTTP exchange was recorded for this check.</p>';
  const last = failingExchange(exchanges);
  const curl = last ? curlOf(last) : undefined;
  const which = last?.judged ? 'the request whose answer the failure quotes' : 'the last request';
  const replay = curl ? `<h4>Reproduce ${which} with curl</h4><pre class="cmd">${e(curl.command)}</pre>${curl.warnings.map((w) => `<p class="warn">${e(w)}</p>`).join('')}` : '';
  const items = exchanges.map((x, i) => exchangeBlock(x, i + 1, x === last));
  return `${replay}<h4>HTTP exchanges (${exchanges.length})</h4>${items.join('\n')}`;
}

function exchangeBlock(x: Exchange, n: number, last: boolean): string {
  const response = x.status !== undefined ? `${headers(x.headers)}${body(x.body, x.truncated)}` : `<p class="warn">no answer: ${e(x.error ?? 'unknown error')}</p>`;
  const { command, warnings } = curlOf(x);
  return `<details class="exchange"${last ? ' open' : ''}><summary>${n}. <code>${e(exchangeLine(x))}</code>${last ? (x.judged ? ' (the answer the failure quotes)' : ' (the last exchange)') : ''}</summary>
<div class="pair"><div><h5>request</h5><p><code>${e(x.method)} ${e(x.url)}</code></p>${headers(x.requestHeaders)}${x.requestBody !== undefined ? body(x.requestBody, x.requestTruncated === true) : ''}</div>
<div><h5>response${x.status !== undefined ? ` ${x.status}` : ''}</h5>${response}</div></div>
${last ? '' : `<details><summary>curl</summary><pre class="cmd">${e(command)}</pre>${warnings.map((w) => `<p class="warn">${e(w)}</p>`).join('')}</details>`}
</details>`;
}

function headers(h: Record<string, string | string[]>): string {
  const rows = Object.entries(h).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => `<tr><th>${e(k)}</th><td>${e(String(x))}</td></tr>`));
  return rows.length === 0 ? '' : `<table class="headers">${rows.join('')}</table>`;
}

function body(text: string, truncated: boolean): string {
  const note = truncated ? '<p class="meta">(the evidence kept only the start of this body)</p>' : '';
  if (text === '') return '<p class="meta">(empty body)</p>';
  if (text.length <= FOLD_CHARS) return `<pre class="http-body">${e(text)}</pre>${note}`;
  return `<pre class="http-body">${e(text.slice(0, FOLD_CHARS))}</pre><details><summary>${text.length - FOLD_CHARS} more characters</summary><pre class="http-body">${e(text.slice(FOLD_CHARS))}</pre></details>${note}`;
}

export function htmlReporter(file: string, options: HtmlOptions = {}): Reporter {
  return { onEnd: (report) => writeFileAtomic(file, renderHtml(report, options)) };
}

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#fff;border-bottom:1px solid #d8dde3;padding:12px 24px}
main{padding:0 24px 48px}
h1{font-size:20px;margin:4px 0}h1.v-failed{color:#b42318}h1.v-passed{color:#067647}h1.v-interrupted,h1.v-nothing-tested{color:#b54708}
h2{font-size:17px;margin:24px 0 8px}h4{margin:14px 0 6px}h5{margin:4px 0}
table{border-collapse:collapse;background:#fff}th,td{border:1px solid #d8dde3;padding:4px 8px;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}td.zero{color:#98a2b3}
code,pre{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
pre{background:#fff;border:1px solid #d8dde3;padding:8px;white-space:pre-wrap;word-break:break-all;margin:4px 0;max-height:480px;overflow:auto}
pre.cmd{background:#101828;color:#e4e7ec}
#filters{display:flex;gap:12px;flex-wrap:wrap;background:#fff;border:1px solid #d8dde3;padding:8px;margin-bottom:8px}
.result{background:#fff;border:1px solid #d8dde3;margin:4px 0;padding:4px 8px}
.result.failure{border-left:4px solid #b42318}
.result>summary{cursor:pointer}
.body{padding:0 8px 8px}
.badge{display:inline-block;border-radius:4px;padding:0 6px;font-size:12px;font-weight:600;color:#fff;background:#667085}
.s-passed{background:#067647}.s-failed,.s-error{background:#b42318}.s-skipped{background:#98a2b3}.s-expected-failure,.s-profile-difference{background:#b54708}
.code{font:12px ui-monospace,monospace;border:1px solid #b42318;color:#b42318;border-radius:4px;padding:0 4px}
.meta{color:#667085;font-size:12px}
.title{color:#344054}
blockquote{margin:4px 0 4px 12px;padding-left:8px;border-left:3px solid #d0d5dd;color:#344054}
.warn{color:#b54708;margin:2px 0}
.exchange{border-top:1px solid #eaecf0;padding:4px 0}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}
table.headers th{font-weight:500;color:#475467;white-space:nowrap}table.headers td{word-break:break-all;font:12px ui-monospace,monospace}
[hidden]{display:none!important}
`;

/** Filters: every card carries its suite, status, level, kind and rules as data attributes. */
const SCRIPT = `
(function(){
  var ids=['f-suite','f-status','f-level','f-kind','f-rule'];
  function apply(){
    var suite=document.getElementById('f-suite').value, status=document.getElementById('f-status').value,
        level=document.getElementById('f-level').value, kind=document.getElementById('f-kind').value,
        rule=document.getElementById('f-rule').value.trim();
    var cards=document.querySelectorAll('.result'), shown=0;
    for(var i=0;i<cards.length;i++){
      var d=cards[i].dataset;
      var ok=(!suite||d.suite===suite)&&(!status||(status==='act'?d.act==='1':d.status===status))&&(!level||d.level===level)&&(!kind||d.kind===kind)
        &&(!rule||d.rules.split(' ').some(function(r){return r===rule||r.indexOf(rule+'.')===0||r.indexOf(rule)!==-1;}));
      cards[i].hidden=!ok; if(ok) shown++;
    }
    document.getElementById('shown').textContent=shown+' of '+cards.length+' checks shown';
  }
  ids.forEach(function(id){var el=document.getElementById(id); el.addEventListener('input',apply); el.addEventListener('change',apply);});
  apply();
})();
`;
