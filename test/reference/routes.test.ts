// Every OpenAPI operation of spec/http/*.openapi.yaml has exactly one route in its reference
// server, every route has an operation (or says why it is unlisted: test-only, operator, pages,
// assets), and a listed route is served at its operation's path (the `svc` profile). Each server
// starts with its test-only routes on, so they are in the table too. The 405 of a GET-only path
// lists HEAD on every server. A route's `auth` is the one its operation's security declares.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetch } from 'undici';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../reference/cli.ts';
import type { RunningRp } from '../../reference/rp/app.ts';
import type { RunningBridge } from '../../reference/bridge/app.ts';
import type { RunningRelay } from '../../reference/relay/app.ts';
import type { Auth, Route, RouteInfo } from '../../reference/shared/routes.ts';
import type { paths } from '../../schemas/ts/http/relay.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface OpenApi {
  paths: Record<string, Record<string, unknown>>;
  security?: Array<Record<string, unknown>>;
}

const openapi = async (server: string): Promise<OpenApi> => parse(await readFile(new URL(`../../spec/http/${server}.openapi.yaml`, import.meta.url), 'utf8')) as OpenApi;

/**
 * The OpenAPI security schemes a route's `auth` stands for. None: the operation declares no
 * scheme, its credential (if any) being in the body or the path, where OpenAPI has no scheme.
 */
const SCHEMES: Record<Auth, string[]> = {
  none: [],
  'signed-body': [],
  'body-secret': [],
  link: [],
  'signed-request': ['challenge', 'signedRequest', 'groupRoster', 'driveLink'],
  cookie: ['bindingCookie', 'txCookie', 'sessionCookie'],
  client: ['clientBasic'],
  bearer: ['bearer', 'claimToken'],
  operator: [],
};

/** `METHOD /path` of every operation of one OpenAPI document. */
async function operations(server: string): Promise<string[]> {
  const doc = await openapi(server);
  return Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m] !== undefined).map((m) => `${m.toUpperCase()} ${path}`));
}

/** The path an operation's route serves: `{name}` as `:name`, or a wildcard standing for the last parameter. */
function servesOperationPath(route: RouteInfo): boolean {
  const path = route.op.slice(route.op.indexOf(' ') + 1);
  const routed = path.replace(/\{([^}]+)\}/g, ':$1');
  if (route.path === routed) return true;
  const wildcard = /^(.*?)(?::[^/]+)?$/.exec(routed)![1]!;
  return route.path === `${wildcard}**` || route.path === `${wildcard}**${routed.slice(wildcard.length)}`;
}

// A route's operation is a key of the generated `paths`: a typo, or a method the path lacks, fails tsc.
// @ts-expect-error -- no such path in spec/http/relay.openapi.yaml
export const typo: Route<paths> = { op: 'GET /healthz', auth: 'none', handle: () => new Response() };
// @ts-expect-error -- /health has no POST
export const wrongMethod: Route<paths> = { op: 'POST /health', auth: 'none', handle: () => new Response() };

let dir: string;
const running: Record<'rp' | 'bridge' | 'relay', { routes: readonly RouteInfo[]; url: string; close(): Promise<void> }> = {} as never;

async function serve(args: string[]): Promise<{ running: unknown; url: string }> {
  const out: string[] = [];
  const io = { stdout: { write: (s: string) => out.push(s) }, stderr: { write: () => undefined } };
  const started = await main([...args, '--port', '0', '--quiet'], io);
  if (!started.running) throw new Error(`${args[0]} did not start`);
  return { running: started.running, url: /\((http:\/\/[^)]+)\)/.exec(out.join(''))![1]! };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'routes-'));
  const rp = await serve(['rp', '--data-dir', ':memory:']);
  running.rp = { routes: (rp.running as RunningRp).app.routes, url: rp.url, close: () => (rp.running as RunningRp).close() };
  const bridge = await serve(['bridge', '--data-dir', ':memory:', '--test-operator-token', 'operator']);
  running.bridge = { routes: (bridge.running as RunningBridge).app.routes, url: bridge.url, close: () => (bridge.running as RunningBridge).close() };
  const relay = await serve(['relay', '--data-dir', join(dir, 'relay'), '--test-pages']);
  running.relay = { routes: (relay.running as RunningRelay).routes, url: relay.url, close: () => (relay.running as RunningRelay).close() };
});

afterAll(async () => {
  await Promise.all(Object.values(running).map((r) => r?.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('the route layer judges a body by its declared media type', () => {
  it("refuses a token request that is not a form with OAuth's 400, naming the type, and takes a form", async () => {
    const asJson = await fetch(`${running.bridge.url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":"authorization_code"}' });
    expect(asJson.status).toBe(400);
    expect(await asJson.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('application/x-www-form-urlencoded') });
    const asForm = await fetch(`${running.bridge.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body: 'grant_type=authorization_code',
    });
    expect(asForm.status).toBe(401); // read as a form: no client authentication
    await asForm.text();
  });

  it('reads a relay body with no Content-Type, or text/plain, by its bytes, as the deployed client and a browser send it', async () => {
    // Bytes: fetch sends no Content-Type; a string: text/plain. Either way the JSON is read and its identity judged.
    for (const body of [Buffer.from('{"identity":"x"}'), '{"identity":"x"}']) {
      const res = await fetch(`${running.relay.url}/identities`, { method: 'POST', body });
      expect((await res.json()) as { error: string }).toMatchObject({ error: 'invalid_identity' });
    }
  });
});

describe.each(['rp', 'bridge', 'relay'] as const)('the %s route table', (server) => {
  it('has exactly one route per OpenAPI operation, and every other route says why it is unlisted', async () => {
    const ops = await operations(server);
    const { routes } = running[server];
    const listed = routes.filter((r) => r.unlisted === undefined).map((r) => r.op);
    expect([...listed].sort()).toEqual([...ops].sort());
    for (const r of routes.filter((x) => x.unlisted !== undefined)) {
      expect(ops, `${r.op} is unlisted but the OpenAPI has it`).not.toContain(r.op);
      expect(r.unlisted!.length, `${r.op} says why it is unlisted`).toBeGreaterThan(10);
    }
  });

  it('serves each operation at its OpenAPI path', () => {
    for (const r of running[server].routes.filter((x) => x.unlisted === undefined)) expect(servesOperationPath(r), `${r.op} is served at ${r.path}`).toBe(true);
  });

  it('needs the authentication its OpenAPI operation declares', async () => {
    const doc = await openapi(server);
    for (const r of running[server].routes.filter((x) => x.unlisted === undefined)) {
      const [method, path] = [r.op.slice(0, r.op.indexOf(' ')).toLowerCase(), r.op.slice(r.op.indexOf(' ') + 1)];
      const op = doc.paths[path]![method] as { security?: Array<Record<string, unknown>> };
      const declared = [...new Set((op.security ?? doc.security ?? []).flatMap((alternative) => Object.keys(alternative)))].sort();
      const allowed = SCHEMES[r.auth];
      if (allowed.length === 0) expect(declared, `${r.op} (auth ${r.auth}) declares no security scheme`).toEqual([]);
      else {
        expect(declared.length, `${r.op} (auth ${r.auth}) declares one of ${allowed.join(', ')}`).toBeGreaterThan(0);
        for (const name of declared) expect(allowed, `${r.op} (auth ${r.auth}) declares ${name}`).toContain(name);
      }
    }
  });

  it('reads only the media types its OpenAPI requestBody lists, where it names them', async () => {
    const doc = await openapi(server);
    for (const r of running[server].routes.filter((x) => x.unlisted === undefined && x.types)) {
      const [method, path] = [r.op.slice(0, r.op.indexOf(' ')).toLowerCase(), r.op.slice(r.op.indexOf(' ') + 1)];
      const body = (doc.paths[path]![method] as { requestBody?: { content?: Record<string, unknown> } }).requestBody;
      expect([...r.types!].sort(), `${r.op} reads what its OpenAPI lists`).toEqual(Object.keys(body?.content ?? {}).sort());
    }
  });

  it('answers 405 on a GET-only path with an Allow that lists HEAD', async () => {
    const res = await fetch(`${running[server].url}${server === 'rp' ? '/svc/context' : '/health'}`, { method: 'DELETE' });
    await res.text();
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });
});
