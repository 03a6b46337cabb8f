// Server-rendered pages: HTML escaping, the page shell (one stylesheet and one script from the
// server's own origin; the CSP allows nothing inline) and the error page.
import type { HttpError } from './errors.ts';

const MAP: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Every server-supplied or client-supplied string goes through `esc` before it reaches a page. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => MAP[c]!);
}

export interface ShellOptions {
  title: string;
  siteName: string;
  stylesheet: string;
  /** The page script, when the page has one. */
  script?: string;
  home?: string;
}

export function shell(options: ShellOptions, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(options.title)} - ${esc(options.siteName)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${esc(options.stylesheet)}">
${options.script ? `<script src="${esc(options.script)}" defer></script>` : ''}
</head>
<body>
<header><a href="${esc(options.home ?? '/')}" class="brand">${esc(options.siteName)}</a></header>
<main>
${body}
</main>
</body>
</html>
`;
}

/** What every page of one server shares: its name, its stylesheet, where a failed flow restarts. */
export interface Site {
  name: string;
  stylesheet: string;
  retry: { href: string; label: string };
}

/** A plain error page for browsers: the same code and rule as the JSON envelope. */
export function errorPage(error: HttpError, site: Site): string {
  return shell(
    { title: 'Sign-in problem', siteName: site.name, stylesheet: site.stylesheet },
    `<h1>This did not work</h1>
<p id="error-detail" data-testid="error-detail">${esc(error.detail)}</p>
<p class="muted">Code <code data-testid="error-code">${esc(error.code)}</code>${error.rule ? ` (rule <code>${esc(error.rule)}</code>)` : ''}</p>
<p><a href="${esc(site.retry.href)}">${esc(site.retry.label)}</a></p>`,
  );
}
