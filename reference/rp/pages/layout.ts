// The page shell: one stylesheet and one script from this origin (the CSP allows nothing inline).
import { esc } from './escape.ts';

export interface LayoutOptions { title: string; rpName: string; script?: boolean }

export function layout(options: LayoutOptions, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(options.title)} - ${esc(options.rpName)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/rp.css">
${options.script ? '<script src="/assets/rp.js" defer></script>' : ''}
</head>
<body>
<header><a href="/" class="brand">${esc(options.rpName)}</a></header>
<main>
${body}
</main>
</body>
</html>
`;
}
