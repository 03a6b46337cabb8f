// The bridge's pages, server-rendered; they work without scripting (the waiting page refreshes
// itself; the visitor offer's availability check is the one script). Every value goes through `esc`.
import QRCode from 'qrcode';
import { esc, shell } from '../shared/pages.ts';
import type { BridgeContext } from './context.ts';
import type { BridgeTx } from './store.ts';
import { hostVerified, type Client } from './clients.ts';
import type { PushView } from './push.ts';

const page = (ctx: BridgeContext, title: string, body: string) => shell({ title, siteName: ctx.config.name, stylesheet: ctx.site.stylesheet }, body);

export const STYLE = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
header{margin-bottom:1.5rem}.brand{font-weight:600;text-decoration:none;color:inherit}.muted{color:#666}
code,.match{font-family:ui-monospace,monospace}.match{font-size:2rem;letter-spacing:.2rem}
label{display:block;margin:.5rem 0}input[type=text]{width:100%;padding:.4rem}button{padding:.4rem 1rem;margin-right:.5rem}
.unverified{color:#a40000}`;

/** The sign-in page: the ID field, and the offer to visitors without an ID (visitor.ts) when a launcher is set. */
export function identifyPage(ctx: BridgeContext, tx: BridgeTx, client: Client, hint: string | undefined, offer: string, problem?: string): string {
  return page(
    ctx,
    'Sign in',
    `<h1>Sign in to ${esc(client.name)}</h1>
<p>${esc(ctx.config.name)} signs you in with your ${esc(ctx.profile.name)} ID.</p>
${problem ? `<p class="unverified" data-testid="problem">${esc(problem)}</p>` : ''}
<form method="post" action="/t/${esc(tx.id)}/identify">
<label>Your ID <input type="text" name="id" autocomplete="username" value="${esc(hint ?? '')}" required></label>
<button type="submit">Continue</button>
</form>
${offer}`,
  );
}

/** An inline SVG QR code of the request's short link, for another device (no script, no image request). */
export async function qrSvg(text: string): Promise<string> {
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return svg.replace('<svg ', '<svg data-testid="qr-svg" role="img" aria-label="QR code of the sign-in link" width="200" height="200" ');
}

/** Send to my app: the button while a prompt is due, else why not (ob.contract.push). */
function pushOffer(tx: BridgeTx, push: PushView | undefined): string {
  if (!push) return '';
  const last =
    push.last === 'failed'
      ? '<p class="unverified" data-testid="push-failed">The last prompt could not be sent.</p>'
      : push.last === 'sent'
        ? '<p class="muted" data-testid="push-sent">Sent: open the app and enter the match code shown above.</p>'
        : '';
  const control =
    push.remaining === 0
      ? '<p class="muted">No more prompts for this sign-in.</p>'
      : push.next_at !== undefined
        ? `<p class="muted">You can send another prompt shortly (${push.remaining} left).</p>`
        : `<form method="post" action="/t/${esc(tx.id)}/push"><button type="submit" data-testid="push">Send to my app</button> <span class="muted">(${push.remaining} left)</span></form>`;
  return `${last}${control}`;
}

export function waitingPage(ctx: BridgeContext, tx: BridgeTx, links: { requestUri: string; deepLink: string; signers: string[]; qr: string; push?: PushView }): string {
  return page(
    ctx,
    'Approve the sign-in',
    `<meta http-equiv="refresh" content="2">
<h1>Approve with your signer</h1>
<p>Open your signer and approve the sign-in to <strong>${esc(ctx.config.name)}</strong>.</p>
<ul data-testid="signers">${links.signers.map((s, i) => `<li><a href="${esc(s)}" rel="noopener">Sign with ${esc(new URL(s).host)}</a>${i === links.signers.length - 1 && s.startsWith(ctx.config.defaultSigner ?? '\u0000') ? ' <span class="muted">(works if this browser already holds your keys there)</span>' : ''}</li>`).join('')}
<li><a href="${esc(links.deepLink)}">Open the app on this device</a></li></ul>
${links.qr}
<p>On another device, scan the code or open <code data-testid="request-uri">${esc(links.requestUri)}</code> and enter the match code</p>
<p class="match" data-testid="match-code">${esc(tx.matchCode ?? '')}</p>
${pushOffer(tx, links.push)}
<form method="post" action="/t/${esc(tx.id)}/retry"><button type="submit">Use another ID</button></form>`,
  );
}

export function consentPage(ctx: BridgeContext, tx: BridgeTx, client: Client, claims: string[]): string {
  const host = new URL(tx.redirectUri).host;
  // A URL client names itself: its host is verified only when the return address is on it (ob.clients.url-consent).
  const owner = client.url
    ? hostVerified(ctx, client, tx.redirectUri)
      ? `<span data-testid="host-verified">verified: the application's own host</span>; nobody reviewed this application`
      : `<span class="unverified" data-testid="host-unverified">unverified: the application at <strong>${esc(client.owner)}</strong> sends you back to another host</span>; nobody reviewed this application`
    : client.owner === 'operator'
      ? `run by the operator of ${esc(ctx.config.name)}`
      : `registered by <strong>${esc(client.owner)}</strong>; nobody reviewed this application`;
  const labels: Record<string, string> = { [ctx.profile.ids.id_scope]: `Your ${ctx.profile.name} ID`, profile: 'Your public profile (name, picture, profile page)' };
  return page(
    ctx,
    'Share with the application',
    `<h1>${esc(client.name)}</h1>
<p>at <strong>${esc(host)}</strong>, ${owner}.</p>
<p>Signed in as <strong>${esc(tx.identity ?? '')}</strong>. It will learn an account number for you${claims.length > 0 ? ' and what you leave ticked' : ''}.</p>
<form method="post" action="/t/${esc(tx.id)}/consent">
${claims.map((c) => `<label><input type="checkbox" name="claims" value="${esc(c)}" checked> ${esc(labels[c] ?? c)}</label>`).join('\n')}
<button type="submit" name="decision" value="approve">Continue</button>
<button type="submit" name="decision" value="deny">Cancel</button>
</form>`,
  );
}

export function messagePage(ctx: BridgeContext, title: string, text: string): string {
  return page(ctx, title, `<h1>${esc(title)}</h1><p>${esc(text)}</p>`);
}

export function accountPage(
  ctx: BridgeContext,
  identity: string | undefined,
  apps: Array<{ client: string; name: string; claims: string[]; lastUse: number }>,
  signins: Array<{ at: number; client: string; delegated: boolean; browser: string }>,
): string {
  if (identity === undefined) return page(ctx, 'Account', '<h1>Account</h1><p>You are not signed in here. Sign in to an application through this bridge first.</p>');
  return page(
    ctx,
    'Account',
    `<h1>${esc(identity)}</h1>
<h2>Applications</h2>
<ul>${apps
      .map(
        (a) =>
          `<li>${esc(a.name)} <span class="muted">(${esc(a.claims.join(', ') || 'account number only')}; last ${esc(new Date(a.lastUse).toISOString())})</span>
<form method="post" action="/account/revoke"><input type="hidden" name="client_id" value="${esc(a.client)}"><button type="submit">Revoke</button></form></li>`,
      )
      .join('')}</ul>
<h2>Recent sign-ins</h2>
<ul>${signins.map((s) => `<li>${esc(new Date(s.at).toISOString())} ${esc(s.client)}, ${esc(s.browser)}${s.delegated ? ' (session key)' : ''}</li>`).join('')}</ul>
<form method="post" action="/account/logout"><button type="submit">Sign out</button></form>`,
  );
}
