// The developer console (document 2, Clients 1), driven as its page's forms post. Document 2 states
// what the console does (at most 10 applications per owner; "Rotation with overlap: ... the old
// one works until the owner retires it or 7 days pass"; "The sector is fixed when a client is
// created and never changes") but shows none of its requests, so the shapes, and this check, are
// the project's profile (ob.console.forms).
import { decodeJwt } from 'jose';
import type { Check } from '../../../run/model.ts';
import type { ClientCredentials } from '../../../actors/oidc/client.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { safeJson } from '../../../run/answers.ts';
import { bridgeCheck } from '../check.ts';
import { said, type BridgeTarget } from '../driver.ts';

type Obj = Record<string, unknown>;
const jsonOf = (r: Parameters<typeof safeJson>[0]): Obj | undefined => {
  const v = safeJson(r);
  return v !== null && typeof v === 'object' ? (v as Obj) : undefined;
};

function consoleCheck(t: BridgeTarget): Check {
  const cap = limits.clients_per_owner_default;
  return bridgeCheck(t, {
    id: 'bridge/profile/console',
    title: `an owner registers ${cap} applications in the console and the next is 409; after a rotation the old secret and the new one authenticate, after the retirement only the new one; an edit of the redirect URIs keeps a user's sub; two applications created on one sector host give a user one sub`,
    rules: ['ob.console.forms'],
    context: ['ob.clients.registered', 'ob.subject.pairwise', 'ob.subject.sector'],
    run: async (s, e) => {
      // The owner's bridge session is the console's sign-in.
      const owner = (await s.tokens()).signIn.user;
      const post = (path: string, fields: Record<string, string>) =>
        owner.browser.http.post(new URL(path, t.issuer).href, new URLSearchParams(fields).toString(), {
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        });
      const change = (c: ClientCredentials, op: string, fields: Record<string, string> = {}) => post(`/developers/clients/${encodeURIComponent(c.client_id)}/${op}`, fields);
      const tag = Math.random().toString(36).slice(2, 8);
      // Two of them share a sector host chosen at creation (Pairwise subject: "or an explicit sector host chosen at creation").
      const sectorHost = `sector-${tag}.console.example`;
      const SHARED = [3, 4];
      const register = (i: number) =>
        post('/developers/clients', {
          name: `app ${i}`,
          redirect_uris: `https://app${i}-${tag}.console.example/cb`,
          token_endpoint_auth_method: 'client_secret_basic',
          ...(SHARED.includes(i) ? { sector_host: sectorHost } : {}),
        });
      const made: ClientCredentials[] = [];
      for (let i = 1; i <= cap; i++) {
        const r = await register(i);
        const b = jsonOf(r);
        if (
          !e.that(
            r.status === 201 && typeof b?.client_id === 'string' && typeof b.client_secret === 'string',
            `registration ${i} of ${cap} answered ${said(r)}, not 201 with a client_id and client_secret`,
          )
        )
          return;
        made.push({ client_id: String(b!.client_id), client_secret: String(b!.client_secret), redirect_uri: `https://app${i}-${tag}.console.example/cb` });
      }
      const past = await register(cap + 1);
      e.that(past.status === 409, `registration ${cap + 1} of an owner with ${cap} answered ${said(past)}, not 409`);

      // Rotation keeps the old secret until the owner retires it.
      const oidc = await s.oidc();
      const authenticates = async (c: ClientCredentials) => (await oidc.introspect(c, 'basic', 'not-a-token')).status === 200;
      const old = made[0]!;
      const rotated = await change(old, 'rotate');
      const secret = jsonOf(rotated)?.client_secret;
      if (!e.that(rotated.status === 201 && typeof secret === 'string', `a rotation answered ${said(rotated)}, not 201 with the new client_secret`)) return;
      const fresh = { ...old, client_secret: String(secret) };
      e.that((await authenticates(old)) && (await authenticates(fresh)), 'after a rotation the old and the new secret do not both authenticate at /introspect');
      const retired = await change(old, 'retire');
      e.that(retired.status < 400, `the retirement answered ${said(retired)}`);
      e.that(!(await authenticates(old)), 'after the retirement the old secret still authenticates at /introspect');
      e.that(await authenticates(fresh), 'after the retirement the new secret no longer authenticates at /introspect');

      // The sector is fixed at creation: an edit of the redirect URIs keeps a user's sub.
      const second = made[1]!;
      const before = await s.tokens({ credentials: second });
      const elsewhere = `https://elsewhere-${tag}.console.example/cb`;
      const edited = await change(second, 'edit', { name: 'app 2', redirect_uris: elsewhere });
      if (!e.that(edited.status < 400, `the edit answered ${said(edited)}`)) return;
      const after = await s.tokens({ credentials: { ...second, redirect_uri: elsewhere }, user: before.signIn.user });
      const [sub1, sub2] = [decodeJwt(String(before.body.id_token)).sub, decodeJwt(String(after.body.id_token)).sub];
      e.that(sub1 === sub2, `after an edit of the redirect URIs the user's sub went from ${String(sub1)} to ${String(sub2)}`);
      // Two applications on one chosen sector host give one user one sub; a third, on its own host, another.
      const [shared1, shared2, own] = await Promise.all(
        [made[SHARED[0]! - 1]!, made[SHARED[1]! - 1]!, made[4]!].map(async (c) => decodeJwt(String((await s.tokens({ credentials: c, user: before.signIn.user })).body.id_token)).sub),
      );
      e.that(
        shared1 === shared2 && shared1 !== own,
        `one user's sub at two applications created on the sector host ${sectorHost} is ${String(shared1)} and ${String(shared2)} (and ${String(own)} at one on its own host): not one sub for the shared sector`,
      );
    },
  });
}

export function consoleChecks(t: BridgeTarget): Check[] {
  return [consoleCheck(t)];
}
