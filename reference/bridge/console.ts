// The developer console `/developers` (document 2, Clients 1): the owner signs in with the native
// protocol on the bridge's own origin (the console is a first-party client of the bridge, so the
// bridge's own sign-in and session serve it), then creates, edits, rotates (7-day overlap),
// retires, deletes and shares (co-owners) clients, at most `clients_per_owner_default` each.
// Secrets are 256-bit, shown once, stored as SHA-256. Every change is an audit event attributed
// to the owner ID. Static clients are shown read-only. The request shapes are project decisions
// (forms; JSON with Accept: application/json).
import { limits } from '../../schemas/ts/limits.ts';
import { normalizeIdInput } from '../../protocol/bridge/id-input.ts';
import { registrableRedirect, sectorOf, isLoopbackRedirect } from '../../protocol/bridge/redirect.ts';
import { s256Challenge } from '../../protocol/bridge/pkce.ts';
import { esc, shell } from '../shared/pages.ts';
import { hashSecret, newSecret } from '../shared/secrets.ts';
import { html, json, prefersJson, utf8Text } from '../shared/http.ts';
import { BRIDGE_STYLESHEET, PATHS, type BridgeContext } from './context.ts';
import { currentSession } from './flow.ts';
import { pageError, redirect } from './responses.ts';
import type { JSONWebKeySet } from 'jose';
import type { Client, AuthMethod } from './clients.ts';
import type { RegisteredClient } from './store.ts';

/** The console's own client id: a first-party public client whose redirect is the console. */
export const CONSOLE_CLIENT_ID = 'developer-console';

export function consoleClient(ctx: Pick<BridgeContext, 'config'>): Client {
  const redirect = `${ctx.config.issuer}${PATHS.developers}`;
  return {
    clientId: CONSOLE_CLIENT_ID,
    name: `${ctx.config.name} developer console`,
    redirectUris: [redirect],
    authMethod: 'none',
    secretHashes: [],
    firstParty: true,
    sector: new URL(redirect).hostname,
    owner: 'operator',
    suspended: false,
  };
}

/** A stored client as the registry serves it: only secrets that have not expired. */
export function registryClient(c: RegisteredClient, now: number): Client {
  const keys = c.keySet === undefined ? {} : 'jwks' in c.keySet ? { jwks: c.keySet.jwks as unknown as JSONWebKeySet } : { jwksUri: c.keySet.jwksUri };
  return {
    ...keys,
    clientId: c.clientId,
    name: c.name,
    redirectUris: c.redirectUris,
    authMethod: c.authMethod as AuthMethod,
    secretHashes: c.secrets.filter((s) => s.expiresAt === null || s.expiresAt > now).map((s) => s.hash),
    firstParty: false,
    sector: c.sector,
    owner: c.owner,
    suspended: false,
  };
}

const METHODS: readonly AuthMethod[] = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'];

/** A private_key_jwt key set: pasted JSON `{keys: [public JWKs]}` or an https URL; a string saying what is wrong otherwise. */
function keySetOf(pasted: string, linked: string): RegisteredClient['keySet'] | string {
  if (linked !== '') {
    if (!URL.canParse(linked) || new URL(linked).protocol !== 'https:') return 'the key set URL must be https';
    return { jwksUri: linked };
  }
  let jwks: unknown;
  try {
    jwks = JSON.parse(pasted);
  } catch {
    return 'paste the key set as JSON ({"keys": [...]}) or give its https URL';
  }
  const keys = (jwks as { keys?: unknown })?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > 10) return 'the key set needs 1 to 10 keys';
  // Public keys only: a pasted private key would be a secret the bridge must never hold.
  if (keys.some((k) => k === null || typeof k !== 'object' || typeof (k as { kty?: unknown }).kty !== 'string' || 'd' in k)) return 'the key set holds public JWKs only (no "d")';
  return { jwks: { keys } };
}

/** The console's form: the body the route layer read under its cap. */
const form = (body: Uint8Array): URLSearchParams => new URLSearchParams(utf8Text(body) ?? '');

const page = (ctx: BridgeContext, title: string, body: string) => html(shell({ title, siteName: ctx.config.name, stylesheet: BRIDGE_STYLESHEET }, body));

function redirectList(text: string): string[] | undefined {
  const uris = [...new Set(text.split(/\s+/).filter((u) => u !== ''))];
  return uris.length > 0 && uris.length <= 10 && uris.every(registrableRedirect) ? uris : undefined;
}

export class Console {
  constructor(
    readonly ctx: BridgeContext,
    /** Reloads the registry after a change (every instance also reloads each second). */
    readonly refresh: () => Promise<void>,
  ) {}

  /** GET /developers: the sign-in link, or the owner's clients, the create form and the static clients. */
  async page(req: Request): Promise<Response> {
    const ctx = this.ctx;
    const session = await currentSession(ctx, req);
    const statics = ctx.clients
      .all()
      .filter((c) => c.clientId !== CONSOLE_CLIENT_ID)
      .map((c) => `<li><strong>${esc(c.name)}</strong> <code>${esc(c.clientId)}</code> ${esc(c.redirectUris.join(' '))}${c.firstParty ? ' (first party)' : ''}</li>`)
      .join('');
    const staticBlock = `<h2>Static clients</h2><p class="muted">Configured by the operator (read-only).</p><ul data-testid="static-clients">${statics}</ul>`;
    if (!session) {
      const authorize = new URL(`${ctx.config.issuer}${PATHS.authorize}`);
      const params = {
        response_type: 'code',
        client_id: CONSOLE_CLIENT_ID,
        redirect_uri: `${ctx.config.issuer}${PATHS.developers}`,
        scope: 'openid',
        state: newSecret(96),
        code_challenge: s256Challenge(newSecret()),
        code_challenge_method: 'S256',
      };
      for (const [k, v] of Object.entries(params)) authorize.searchParams.set(k, v);
      return page(
        ctx,
        'Developers',
        `<h1>Developer console</h1><p>Register applications that sign people in with their ${esc(ctx.profile.name)} ID.</p><p><a data-testid="console-sign-in" href="${esc(authorize.href)}">Sign in with your ID</a></p>${staticBlock}`,
      );
    }
    const mine = (await ctx.store.registeredClients()).filter((c) => c.owner === session.identity || c.coOwners.includes(session.identity));
    const rows = mine
      .map((c) => {
        const base = `${PATHS.developers}/clients/${encodeURIComponent(c.clientId)}`;
        const overlap = c.secrets.find((s) => s.expiresAt !== null);
        return `<li data-testid="client"><strong>${esc(c.name)}</strong> <code data-testid="client-id">${esc(c.clientId)}</code> <span class="muted">${esc(c.authMethod)}; owner ${esc(c.owner)}${c.coOwners.length ? `; co-owners ${esc(c.coOwners.join(', '))}` : ''}${overlap ? `; previous secret valid until ${esc(new Date(overlap.expiresAt!).toISOString())}` : ''}</span>
<form method="post" action="${esc(base)}/edit"><input type="text" name="name" value="${esc(c.name)}" aria-label="name"><input type="text" name="redirect_uris" value="${esc(c.redirectUris.join(' '))}" aria-label="redirect URIs"><button type="submit">Save</button></form>
<form method="post" action="${esc(base)}/rotate"><button type="submit">Rotate secret</button></form>
<form method="post" action="${esc(base)}/retire"><button type="submit">Retire previous secret</button></form>
<form method="post" action="${esc(base)}/owners"><input type="text" name="id" placeholder="co-owner ID" aria-label="co-owner"><button type="submit">Add co-owner</button></form>
<form method="post" action="${esc(base)}/delete"><button type="submit">Delete</button></form></li>`;
      })
      .join('');
    return page(
      ctx,
      'Developers',
      `<h1>Developer console</h1><p>Signed in as <strong data-testid="owner">${esc(session.identity)}</strong>. Registration is ${esc(ctx.config.clientRegistration)}; at most ${limits.clients_per_owner_default} applications per owner.</p>
<h2>Your applications</h2><ul>${rows}</ul>
<h2>New application</h2>
<form method="post" action="${PATHS.developers}/clients">
<label>Name <input type="text" name="name" required></label>
<label>Redirect URIs (exact HTTPS, or loopback for native apps; space separated) <input type="text" name="redirect_uris" required></label>
<label>Client authentication <select name="token_endpoint_auth_method">${METHODS.map((m) => `<option>${m}</option>`).join('')}</select></label>
<label>Sector host (optional: share subjects with another application) <input type="text" name="sector_host"></label>
<label>Key set for private_key_jwt: paste it (JSON) <textarea name="jwks" rows="3"></textarea></label>
<label>or link it (https URL) <input type="text" name="jwks_uri"></label>
<button type="submit">Register</button>
</form>
${staticBlock}`,
    );
  }

  /** The signed-in owner of a change. A browser's cross-site POST is refused before the session is read (CSRF). */
  async #owner(req: Request): Promise<string | Response> {
    const site = req.headers.get('sec-fetch-site');
    const origin = req.headers.get('origin');
    if ((site !== null && site !== 'same-origin') || (origin !== null && origin !== this.ctx.config.issuer)) {
      return pageError(this.ctx, 403, 'console changes come from the console page itself', 'ob.clients.registered');
    }
    const s = await currentSession(this.ctx, req);
    return s ? s.identity : pageError(this.ctx, 401, 'sign in to the developer console first', 'ob.clients.registered');
  }

  #shown(req: Request, c: { clientId: string; secret?: string }, title: string): Response {
    if (prefersJson(req)) return json({ client_id: c.clientId, ...(c.secret ? { client_secret: c.secret } : {}) }, 201);
    return page(
      this.ctx,
      title,
      `<h1>${esc(title)}</h1><p>Client ID <code data-testid="new-client-id">${esc(c.clientId)}</code></p>${c.secret ? `<p>Client secret, shown once: <code data-testid="new-client-secret">${esc(c.secret)}</code></p>` : ''}<p><a href="${PATHS.developers}">Back to the console</a></p>`,
    );
  }

  /** POST /developers/clients */
  async create(req: Request, body: Uint8Array): Promise<Response> {
    const ctx = this.ctx;
    const owner = await this.#owner(req);
    if (owner instanceof Response) return owner;
    const allowed = ctx.config.clientRegistration === 'open' || (ctx.config.clientRegistration === 'allowlist' && (ctx.config.registrationAllowlist ?? []).includes(owner));
    if (!allowed)
      return pageError(
        ctx,
        403,
        `registration is ${ctx.config.clientRegistration} on this bridge${ctx.config.clientRegistration === 'allowlist' ? ` and ${owner} is not on its list` : ''}`,
        'ob.clients.registered',
      );
    const f = form(body);
    const name = (f.get('name') ?? '').trim();
    const uris = redirectList(f.get('redirect_uris') ?? '');
    const method = (f.get('token_endpoint_auth_method') ?? 'client_secret_basic') as AuthMethod;
    const sectorHost = (f.get('sector_host') ?? '').trim().toLowerCase();
    if (name === '' || name.length > 100) return pageError(ctx, 400, 'a name of 1 to 100 characters is required', 'ob.clients.registered');
    if (!uris) return pageError(ctx, 400, 'redirect URIs must be exact HTTPS URIs or loopback http URIs (1 to 10)', 'ob.clients.registered');
    if (!METHODS.includes(method)) return pageError(ctx, 400, `token_endpoint_auth_method must be one of ${METHODS.join(', ')}`, 'ob.clients.registered');
    if (method === 'none' && !uris.every(isLoopbackRedirect) && !uris.every((u) => u.startsWith('https://'))) return pageError(ctx, 400, 'invalid redirect URIs', 'ob.clients.registered');
    if (sectorHost !== '' && !/^[a-z0-9.-]+\.[a-z0-9-]+$/.test(sectorHost)) return pageError(ctx, 400, 'the sector host must be a dotted host name', 'ob.clients.registered');
    let keySet: RegisteredClient['keySet'];
    if (method === 'private_key_jwt') {
      const k = keySetOf((f.get('jwks') ?? '').trim(), (f.get('jwks_uri') ?? '').trim());
      if (typeof k === 'string') return pageError(ctx, 400, k, 'ob.clients.registered');
      keySet = k;
    }
    const secret = method === 'none' || method === 'private_key_jwt' ? undefined : newSecret();
    const now = ctx.now();
    const client: RegisteredClient = {
      clientId: `${ctx.profile.name}_${newSecret(96)}`,
      name,
      redirectUris: uris,
      authMethod: method,
      secrets: secret ? [{ hash: hashSecret(secret), expiresAt: null }] : [],
      sector: sectorOf(uris, sectorHost || undefined),
      owner,
      coOwners: [],
      ...(keySet ? { keySet } : {}),
      createdAt: now,
      updatedAt: now,
    };
    if (!(await ctx.store.createClient(client, limits.clients_per_owner_default))) {
      return pageError(ctx, 409, `an owner may register at most ${limits.clients_per_owner_default} applications`, 'ob.clients.registered');
    }
    await ctx.store.audit('client.created', owner, { client_id: client.clientId });
    await this.refresh();
    return this.#shown(req, { clientId: client.clientId, ...(secret ? { secret } : {}) }, 'Application registered');
  }

  /** POST /developers/clients/{id}/{edit|rotate|retire|owners|delete} */
  async change(req: Request, clientId: string, op: string, body: Uint8Array): Promise<Response> {
    const ctx = this.ctx;
    const owner = await this.#owner(req);
    if (owner instanceof Response) return owner;
    const c = (await ctx.store.registeredClients()).find((x) => x.clientId === clientId);
    if (!c || (c.owner !== owner && !c.coOwners.includes(owner))) return pageError(ctx, 404, 'no such application of yours', 'ob.clients.registered');
    const f = form(body);
    const now = ctx.now();
    let shown: string | undefined;
    switch (op) {
      case 'edit': {
        const name = (f.get('name') ?? c.name).trim();
        const uris = f.has('redirect_uris') ? redirectList(f.get('redirect_uris')!) : c.redirectUris;
        if (name === '' || name.length > 100 || !uris) return pageError(ctx, 400, 'a name of 1 to 100 characters and exact redirect URIs are required', 'ob.clients.registered');
        await ctx.store.updateClient({ ...c, name, redirectUris: uris });
        await ctx.store.audit('client.updated', owner, { client_id: clientId });
        break;
      }
      case 'rotate': {
        if (c.authMethod === 'none' || c.authMethod === 'private_key_jwt') return pageError(ctx, 400, `a ${c.authMethod} client has no secret`, 'ob.clients.registered');
        // Rotation with overlap: the current secret keeps working for 7 days or until retired.
        shown = newSecret();
        const current = c.secrets.filter((s) => s.expiresAt === null).map((s) => ({ hash: s.hash, expiresAt: now + limits.secret_overlap_seconds * 1000 }));
        const secrets = [{ hash: hashSecret(shown), expiresAt: null }, ...current].slice(0, limits.client_secrets_during_rotation);
        await ctx.store.updateClient({ ...c, secrets });
        await ctx.store.audit('client.secret_rotated', owner, { client_id: clientId });
        break;
      }
      case 'retire':
        await ctx.store.updateClient({ ...c, secrets: c.secrets.filter((s) => s.expiresAt === null) });
        await ctx.store.audit('client.updated', owner, { client_id: clientId, retired_previous_secret: true });
        break;
      case 'owners': {
        const parsed = normalizeIdInput(f.get('id') ?? '');
        if (!parsed.ok) return pageError(ctx, 400, `not a valid ID (${parsed.reason})`, 'ob.clients.registered');
        if (parsed.id !== c.owner && !c.coOwners.includes(parsed.id)) await ctx.store.updateClient({ ...c, coOwners: [...c.coOwners, parsed.id] });
        await ctx.store.audit('client.updated', owner, { client_id: clientId, co_owner: parsed.id });
        break;
      }
      case 'delete':
        await ctx.store.deleteClient(clientId);
        await ctx.store.audit('client.deleted', owner, { client_id: clientId });
        break;
      default:
        return pageError(ctx, 404, 'no such operation', 'ob.clients.registered');
    }
    await this.refresh();
    if (shown !== undefined) return this.#shown(req, { clientId, secret: shown }, 'New secret');
    return prefersJson(req) ? json({ client_id: clientId }) : redirect(`${ctx.config.issuer}${PATHS.developers}`);
  }
}
