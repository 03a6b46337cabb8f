// A plain error page for browsers: the same code and rule as the JSON envelope.
import type { RpError } from '../errors.ts';
import { esc } from './escape.ts';
import { layout } from './layout.ts';

export function errorPage(error: RpError, rpName: string): string {
  return layout({ title: 'Sign-in problem', rpName }, `<h1>This did not work</h1>
<p id="error-detail" data-testid="error-detail">${esc(error.detail)}</p>
<p class="muted">Code <code data-testid="error-code">${esc(error.code)}</code>${error.rule ? ` (rule <code>${esc(error.rule)}</code>)` : ''}</p>
<p><a href="/login">Start a new sign-in</a></p>`);
}
