// The offer to visitors without an ID (document 2, Visitors without an ID): a name field with the
// launcher's hosted suffix, checked as typed against the launcher's `GET /hosted/availability`
// from the visitor's browser (the bridge neither proxies it nor learns the typed name), creation
// in a new tab at `{launcher}/app/?handle=<name>&from=signin`. The sign-in tab tells the bridge it
// is waiting (`POST /t/{id}/creating`), re-checks the name every 20 seconds and on focus, and fills
// in the ID field once the name is taken. Without scripting the form still opens the launcher.
// The bridge learns only the hosted suffix, from the launcher's public `GET /` (`hosted_domains`).
import { limits } from '../../schemas/ts/limits.ts';
import { esc } from '../shared/pages.ts';
import type { BridgeContext } from './context.ts';
import { PATHS } from './context.ts';
import type { BridgeTx } from './store.ts';

export const VISITOR_SCRIPT_PATH = '/assets/visitor.js';

const RETRY_MS = 60_000;
let known: { launcher: string; domain: string | undefined; at: number } | undefined;

/** The launcher's first hosted domain (cached; undefined while it cannot be read). */
export async function launcherDomain(launcher: string, now = Date.now()): Promise<string | undefined> {
  if (known?.launcher === launcher && (known.domain !== undefined || now - known.at < RETRY_MS)) return known.domain;
  let domain: string | undefined;
  try {
    const res = await fetch(`${launcher}/`, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(2000) });
    const body = res.ok ? ((await res.json()) as { hosted_domains?: unknown }) : {};
    const first = Array.isArray(body.hosted_domains) ? body.hosted_domains[0] : undefined;
    if (typeof first === 'string' && /^[a-z0-9.-]+$/.test(first)) domain = first;
  } catch {
    domain = undefined;
  }
  known = { launcher, domain, at: now };
  return domain;
}

/** The launcher's origin: the one other origin the sign-in page may connect and submit to. */
export const launcherOrigin = (ctx: BridgeContext): string | undefined => (ctx.config.launcherUrl === 'none' ? undefined : new URL(ctx.config.launcherUrl).origin);

export async function visitorOffer(ctx: BridgeContext, tx: BridgeTx): Promise<string> {
  const launcher = ctx.config.launcherUrl;
  if (launcher === 'none') return '';
  const domain = await launcherDomain(launcher);
  return `<section id="visitor" data-testid="visitor-offer" data-launcher="${esc(launcher)}" data-domain="${esc(domain ?? '')}" data-creating="${esc(`${PATHS.transaction}${tx.id}/creating`)}" data-recheck-ms="${limits.name_availability_recheck_seconds * 1000}">
<h2>No ID yet?</h2>
<p>Create one: it signs you in here and anywhere else that accepts ${esc(ctx.profile.name)} IDs, with no password.</p>
<form method="get" action="${esc(launcher)}/app/" target="_blank" rel="noopener">
<input type="hidden" name="from" value="signin">
<label>Name <input type="text" name="handle" autocomplete="off" autocapitalize="none" spellcheck="false" data-testid="handle">${domain ? ` <span class="muted">.${esc(domain)}</span>` : ''}</label>
<p class="muted" data-testid="availability" aria-live="polite"></p>
<button type="submit">Create it in a new tab</button>
</form>
<script src="${VISITOR_SCRIPT_PATH}"></script>
</section>`;
}

/** The page script (served from the bridge's origin; the content policy allows no inline script). */
export const VISITOR_SCRIPT = `(() => {
  const root = document.getElementById('visitor');
  if (!root) return;
  const { launcher, domain, creating, recheckMs } = root.dataset;
  const handle = root.querySelector('input[name=handle]');
  const out = root.querySelector('[data-testid=availability]');
  const idField = document.querySelector('input[name=id]');
  let debounce, timer, waitingFor;
  const norm = (s) => s.trim().toLowerCase();
  async function availability(name) {
    const u = new URL('/hosted/availability', launcher);
    u.searchParams.set('handle', name);
    if (domain) u.searchParams.set('domain', domain);
    try {
      const r = await fetch(u, { credentials: 'omit', cache: 'no-store' });
      if (r.status === 429) { out.textContent = 'Too many checks: try again in a moment.'; return undefined; }
      return r.ok ? await r.json() : undefined;
    } catch { return undefined; }
  }
  handle.addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(async () => {
      const name = norm(handle.value);
      if (!name) { out.textContent = ''; return; }
      const a = await availability(name);
      if (!a || norm(handle.value) !== name) return;
      out.textContent = a.available ? a.identity + ' is free.' : (a.message || a.reason);
    }, 300);
  });
  async function recheck() {
    if (!waitingFor) return;
    const a = await availability(waitingFor);
    if (a && a.available === false && a.reason === 'taken') {
      idField.value = a.identity;
      out.textContent = a.identity + ' exists now: continue to sign in with it.';
      clearInterval(timer);
      waitingFor = undefined;
      idField.focus();
    }
  }
  root.querySelector('form').addEventListener('submit', () => {
    waitingFor = norm(handle.value);
    if (!waitingFor) return;
    fetch(creating, { method: 'POST', credentials: 'same-origin' }).catch(() => undefined);
    out.textContent = 'Finish creating your ID in the new tab; this page fills it in when it exists.';
    clearInterval(timer);
    timer = setInterval(recheck, Number(recheckMs));
  });
  window.addEventListener('focus', recheck);
  document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'visible') recheck(); });
})();
`;
