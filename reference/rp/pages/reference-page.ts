// A request by reference opened in a browser (ns.reference.browser): a page offering signers.
// It never shows the match code (ns.reference.no-match-code).
import { esc } from '../../shared/pages.ts';
import { layout } from './layout.ts';

export function referencePage(d: { rpName: string; serviceName: string; deepLink: string; webSignerLink: string; requestUri: string }): string {
  return layout(
    { title: 'Approve a sign-in', rpName: d.rpName },
    `<h1>Approve a sign-in to ${esc(d.rpName)}</h1>
<p>This link carries a sign-in request. Open it with your ${esc(d.serviceName)} signer; it will ask for the match code shown on the screen where you started.</p>
<p><a id="deep-link" data-testid="deep-link" class="button" href="${esc(d.deepLink)}">Open the ${esc(d.serviceName)} app</a>
<a id="web-signer" data-testid="web-signer" class="button" href="${esc(d.webSignerLink)}">Use the web signer</a></p>
<p class="muted">Link: <code>${esc(d.requestUri)}</code></p>`,
  );
}
