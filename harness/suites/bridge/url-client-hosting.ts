// What the URL client checks share (document 2, Clients 3): client documents hosted on the test
// authority at a fresh host each, the /authorize of a URL client in a fresh browser, how its
// answer reads (taken, or an error page), and the check wrapper that needs a declared URL client
// mode (ob.contract.url-clients).
import { randomBytes } from 'node:crypto';
import type { Check } from '../../run/model.ts';
import type { FileSpec } from '../../actors/authority/types.ts';
import { newPkce, type ClientCredentials } from '../../actors/oidc/client.ts';
import type { HttpResponse } from '../../actors/http.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { bridgeCheck } from './check.ts';
import { CheckSkip, type BridgeSession, type BridgeTarget } from './driver.ts';

export interface Hosted {
  clientId: string;
  host: string;
  credentials: ClientCredentials;
  /**
   * A redirect on another origin that only the document lists. A check of a fetch rule asks for
   * it: the bridge can accept it only by using the document, whatever it does without one.
   */
  foreign: string;
}

export const CAP = limits.url_client_doc_max_bytes;
export const TIMEOUT_MS = limits.url_client_fetch_timeout_seconds * 1000;

/** The document of a URL client at `clientId` returning to `redirects` (its own /cb by default). */
export const documentFor = (clientId: string, name: string, redirects: string[], extra: Record<string, unknown> = {}) => ({
  client_id: clientId,
  client_name: name,
  redirect_uris: redirects,
  ...extra,
});

/**
 * Serves a client document on a fresh host of the authority. `body` builds the document from the
 * client ID (undefined: the URL answers 404, nothing published).
 */
export async function host(
  t: BridgeTarget,
  options: { scheme?: 'https' | 'http'; body?: (clientId: string, host: string) => unknown; file?: Omit<FileSpec, 'url' | 'body'>; path?: string } = {},
): Promise<Hosted> {
  const info = await t.authority.info();
  const name = `app-${randomBytes(5).toString('hex')}.clients.test`;
  const scheme = options.scheme ?? 'https';
  const port = scheme === 'https' ? (info.httpsPort === 443 ? '' : `:${info.httpsPort}`) : info.httpPort === 80 ? '' : `:${info.httpPort}`;
  const clientId = `${scheme}://${name}${port}${options.path ?? '/client.json'}`;
  const foreign = `https://${name.split('.')[0]}.elsewhere.example/cb`;
  const body = options.body ? options.body(clientId, name) : documentFor(clientId, `Harness URL app ${name.slice(4, 9)}`, [`https://${name}/cb`, foreign]);
  await t.authority.serveFile({ url: clientId, ...(body === undefined ? { status: 404, body: { error: 'not_found' } } : { body }), ...options.file });
  return { clientId, host: name, credentials: { client_id: clientId, redirect_uri: `https://${name}/cb` }, foreign };
}

export async function fetches(t: BridgeTarget, url: string): Promise<number> {
  return (await t.authority.file(url))?.fetches ?? 0;
}

/** /authorize for a URL client in a fresh browser: the raw answer. */
export async function authorize(s: BridgeSession, c: ClientCredentials, redirectUri = c.redirect_uri): Promise<HttpResponse> {
  const user = await s.newUser();
  return s.openAuthorize(user.browser, s.params({ ...c, redirect_uri: redirectUri }, newPkce(), 'st', 'n', ''));
}

/** The request went on to the bridge's own pages (a transaction), not to an error. */
export const proceeded = (t: BridgeTarget, res: HttpResponse): boolean => res.status < 400 && (res.location === undefined || new URL(res.location, t.issuer).origin === new URL(t.issuer).origin);

/** An error page: 4xx and no redirect anywhere (the client is not known, so nowhere to return to). */
export const refusedPage = (res: HttpResponse): boolean => res.status >= 400 && res.status < 500 && res.location === undefined;

export function needsUrlClients(t: BridgeTarget): void {
  if (t.urlClients !== 'on' && t.urlClients !== 'indieauth')
    throw new CheckSkip('the target declares no URL client mode that fetches from the test authority (bridge.url_clients: indieauth or on; ob.contract.url-clients)');
}

/** A check of URL client IDs: skipped unless the target declares a mode that fetches from the test authority. */
export const urlClientCheck = (t: BridgeTarget, spec: Parameters<typeof bridgeCheck>[1]): Check =>
  bridgeCheck(t, {
    ...spec,
    context: [...(spec.context ?? []), 'ob.contract.url-clients'],
    run: async (s, e, ctx) => {
      needsUrlClients(t);
      return spec.run(s, e, ctx);
    },
  });
