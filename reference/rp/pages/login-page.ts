// The sign-in page (GET /login): the match code, a QR code of the request by reference, the deep
// link, the web-signer handoff, the encoded request to copy, and a paste box for an encoded
// response. The script (assets/rp.js) polls the poll endpoint every second.
import QRCode from 'qrcode';
import { esc } from '../../shared/pages.ts';
import { layout } from './layout.ts';

export interface LoginPageData {
  rpName: string;
  serviceName: string;
  matchCode: string;
  requestUri: string;
  encoded: string;
  deepLink: string;
  webSignerLink: string;
  pollUri: string;
  pollSecret: string;
  responseUri: string;
  home: string;
  expiresAt: string;
}

export async function qrSvg(text: string): Promise<string> {
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return svg.replace('<svg ', '<svg id="qr-svg" data-testid="qr-svg" role="img" aria-label="QR code of the sign-in link" ');
}

export async function loginPage(d: LoginPageData): Promise<string> {
  const qr = await qrSvg(d.requestUri);
  return layout(
    { title: 'Sign in', rpName: d.rpName, script: true },
    `<h1>Sign in to ${esc(d.rpName)}</h1>
<div id="login" data-poll-uri="${esc(d.pollUri)}" data-poll-secret="${esc(d.pollSecret)}" data-response-uri="${esc(d.responseUri)}" data-home="${esc(d.home)}">
<p id="status" data-testid="status" data-status="pending" aria-live="polite">Waiting for your approval&hellip;</p>
<section class="cross">
  <h2>On another device</h2>
  <p>Scan this code with your ${esc(d.serviceName)} signer, then enter the match code there.</p>
  <div id="qr" class="qr">${qr}</div>
  <p class="match">Match code <strong id="match-code" data-testid="match-code">${esc(d.matchCode)}</strong></p>
  <p>Or open the link: <a id="request-uri" data-testid="request-uri" href="${esc(d.requestUri)}">${esc(d.requestUri)}</a></p>
  <p class="muted">Only approve if this code is on a screen in front of you. This request expires at <time>${esc(d.expiresAt)}</time>.</p>
</section>
<section class="same">
  <h2>On this device</h2>
  <p><a id="deep-link" data-testid="deep-link" class="button" href="${esc(d.deepLink)}">Open the ${esc(d.serviceName)} app</a>
  <a id="web-signer" data-testid="web-signer" class="button" href="${esc(d.webSignerLink)}">Use the web signer</a></p>
  <details>
    <summary>Copy the request</summary>
    <textarea id="encoded-request" data-testid="encoded-request" readonly rows="4">${esc(d.encoded)}</textarea>
  </details>
  <form id="paste-form" data-testid="paste-form">
    <label for="paste-response">Paste the response from your signer</label>
    <textarea id="paste-response" name="response" rows="4" required></textarea>
    <button type="submit">Continue</button>
    <p id="paste-error" data-testid="paste-error" role="alert"></p>
  </form>
</section>
</div>`,
  );
}
