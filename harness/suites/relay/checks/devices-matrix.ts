// Devices (document 3, Devices and Device row; spec/facets/relay-owner.yaml): the list and the
// revocation are owner-only, so every other principal is refused and revokes nothing; and a
// revoked device's sessions end while the owner's other devices go on. Document 3 shows the rows'
// fields (`id` with its `dev_` prefix, `name`, ...) but not the reply's envelope, so rows are
// found wherever the answer holds them.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { sessionRegistration } from '../../../actors/relay/index.ts';
import { castOf, learnSystemPath, principalHeaders, REFUSED_PRINCIPALS, type Cast, type Principal, type RegisteredSession } from '../../../actors/relay/owner.ts';
import { relayCheck } from '../check.ts';
import { CheckFailure, isObject, refusedWith, safeJson, said, type RelayTarget, type Session } from '../driver.ts';
import { cellsOf } from './owner-who.ts';

const LANE = 'relay/devices-matrix';
const ok = (r: HttpResponse) => r.status >= 200 && r.status < 300;
const refused = (r: HttpResponse) => r.status >= 400 && r.status < 500;

/** Every object in `v` that is a device row (an `id` with the `dev_` prefix). */
function rowsIn(v: unknown): Array<Record<string, unknown>> {
  if (Array.isArray(v)) return v.flatMap(rowsIn);
  if (!isObject(v)) return [];
  const own = typeof v.id === 'string' && v.id.startsWith('dev_') ? [v] : [];
  return [...own, ...Object.values(v).flatMap(rowsIn)];
}

/** A session opened by a device of `name` (POST /sessions with its X-Svc-Device headers). */
async function deviceSession(s: Session, cast: Cast, name: string): Promise<RegisteredSession> {
  const ids = s.profile.ids;
  const seed = new Uint8Array(randomBytes(32));
  const headers = { [ids.header_device.toLowerCase()]: `install-${randomBytes(8).toString('hex')}`, [ids.header_device_name.toLowerCase()]: name };
  const r = await s.relay.post('/sessions', sessionRegistration(s.profile, cast.owner, seed), headers);
  const sessionId = (safeJson(r) as { session_id?: unknown } | undefined)?.session_id;
  if (r.status !== 201 || typeof sessionId !== 'string') throw new CheckFailure(`POST /sessions with device headers answered ${said(r)}`);
  return { seed, sessionId };
}

type Caller = Principal | RegisteredSession;

async function devicesAs(s: Session, cast: Cast, who: Caller, method: 'GET' | 'POST', deviceId?: string): Promise<HttpResponse> {
  const path = `/devices/${encodeURIComponent(cast.owner.identity)}${method === 'POST' ? '/revoke' : ''}`;
  const body = method === 'POST' ? JSON.stringify({ device_id: deviceId }) : '';
  const headers =
    typeof who === 'string'
      ? await principalHeaders(s.relay, cast, who, method, path, body)
      : await s.relay.authHeaders(cast.owner, method, path, { mode: 'challenge', sessionId: who.sessionId, seed: who.seed }, body);
  return method === 'GET' ? s.relay.get(path, headers) : s.relay.post(path, body, headers);
}

function devicesCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/devices-matrix/who-and-revocation',
    lane: LANE,
    title:
      "the device list and a revocation refuse another identity, its session, its session presented as the owner's, a revoked session and a stranger, and revoke nothing; the owner and its session list and revoke; a revoked device's session ends, the other device's goes on",
    rules: ['ra.devices.list'],
    cells: [
      ...cellsOf('ra.devices.list', 'who', ['owner', 'own-session', ...REFUSED_PRINCIPALS], ['devices', 'revokeDevice']),
      { rule: 'ra.devices.list', facet: 'lifecycle', value: 'device-session', operation: 'devices' },
      { rule: 'ra.devices.list', facet: 'lifecycle', value: 'device-session', operation: 'systemGet' },
    ],
    run: async (s, e) => {
      const [owner, other] = await Promise.all([s.identity(), s.identity()]);
      const cast = await castOf(s.relay, owner, other);
      const [one, two] = await Promise.all([deviceSession(s, cast, 'matrix-one'), deviceSession(s, cast, 'matrix-two')]);
      const list = await devicesAs(s, cast, 'owner', 'GET');
      const rows = rowsIn(safeJson(list));
      const idOf = (name: string) => rows.find((r) => r.name === name)?.id as string | undefined;
      const [first, second] = [idOf('matrix-one'), idOf('matrix-two')];
      if (!e.that(list.status === 200 && first !== undefined && second !== undefined, `the owner's GET /devices answered ${said(list)}, without rows named matrix-one and matrix-two`)) return;
      await Promise.all(
        REFUSED_PRINCIPALS.map(async (who) => {
          const get = await devicesAs(s, cast, who, 'GET');
          e.that(refused(get) && !get.text().includes(first!), `GET /devices by ${who} answered ${said(get)}, expected a refusal`);
          const rv = await devicesAs(s, cast, who, 'POST', first);
          e.that(refused(rv), `a revocation by ${who} answered ${said(rv)}, expected a refusal`);
        }),
      );
      const still = await devicesAs(s, cast, one, 'GET');
      e.that(still.status === 200, `after the refused revocations the device's own session answered ${said(still)}, expected 200`);
      const mine = await devicesAs(s, cast, 'own-session', 'GET');
      e.that(mine.status === 200 && mine.text().includes(first!), `GET /devices by the owner's session answered ${said(mine)}`);
      const byOwnSession = await devicesAs(s, cast, 'own-session', 'POST', first);
      if (!e.that(ok(byOwnSession), `the revocation of ${first} by the owner's session answered ${said(byOwnSession)}`)) return;
      const ended = await devicesAs(s, cast, one, 'GET');
      e.that(ended.status === 401, `the revoked device's session then answered ${said(ended)} on GET /devices, expected 401`);
      const { path: contacts } = await learnSystemPath(s.relay, owner, 'relay/contacts.json', JSON.stringify({ version: 1, contacts: [] }));
      const sys = `/identities/${encodeURIComponent(owner.identity)}/system/${contacts}`;
      const sysGet = await s.relay.get(sys, await s.relay.authHeaders(owner, 'GET', sys, { mode: 'challenge', sessionId: one.sessionId, seed: one.seed }));
      e.that(sysGet.status === 401, `the revoked device's session then answered ${said(sysGet)} on a system document, expected 401`);
      const other2 = await devicesAs(s, cast, two, 'GET');
      e.that(other2.status === 200, `the other device's session after the revocation answered ${said(other2)}, expected 200`);
      const byOwner = await devicesAs(s, cast, 'owner', 'POST', second);
      e.that(ok(byOwner), `the owner's revocation of ${second} answered ${said(byOwner)}`);
      const ended2 = await devicesAs(s, cast, two, 'GET');
      e.that(ended2.status === 401, `the second revoked device's session then answered ${said(ended2)}, expected 401`);
    },
  });
}

/** Document 3's device row: "`client` (`app`, `web` or `cli`), `platform`, `browser`", self-reported. */
function deviceFieldsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/devices/fields',
    lane: LANE,
    title:
      'a session opened with each client document 3 lists (app, web, cli) and its name, kind, platform and browser headers makes a device row carrying them as sent; a client outside the list (Web, desktop) is dropped',
    rules: ['ra.devices.rows'],
    run: async (s, e) => {
      const owner = await s.identity();
      const ids = s.profile.ids;
      const sent = ['app', 'web', 'cli'].map((client) => ({
        client,
        install: `install-${randomBytes(8).toString('hex')}`,
        name: `${client} device`,
        kind: 'laptop',
        platform: 'linux',
        browser: client === 'web' ? 'firefox' : 'none',
      }));
      for (const d of sent) {
        const headers = {
          [ids.header_device.toLowerCase()]: d.install,
          [ids.header_device_client.toLowerCase()]: d.client,
          [ids.header_device_name.toLowerCase()]: d.name,
          [ids.header_device_kind.toLowerCase()]: d.kind,
          [ids.header_device_platform.toLowerCase()]: d.platform,
          [ids.header_device_browser.toLowerCase()]: d.browser,
        };
        const r = await s.relay.post('/sessions', sessionRegistration(s.profile, owner, new Uint8Array(randomBytes(32))), headers);
        if (!e.that(r.status === 201, `POST /sessions as a ${d.client} device: ${said(r)}, not 201`)) return;
      }
      // "anything else dropped": a client the list does not hold (another case, another word) is not kept.
      const others = ['Web', 'desktop'].map((client) => ({ client, install: `install-${randomBytes(8).toString('hex')}`, name: `${client} other` }));
      for (const d of others) {
        const headers = { [ids.header_device.toLowerCase()]: d.install, [ids.header_device_client.toLowerCase()]: d.client, [ids.header_device_name.toLowerCase()]: d.name };
        const r = await s.relay.post('/sessions', sessionRegistration(s.profile, owner, new Uint8Array(randomBytes(32))), headers);
        if (!e.that(r.status === 201, `POST /sessions with ${ids.header_device_client} ${d.client}: ${said(r)}, not 201`)) return;
      }
      // "at most 64 bytes" (32 for the platform) counts bytes, not characters: two-byte characters, sent as UTF-8.
      const wide = { install: `install-${randomBytes(8).toString('hex')}`, kind: `kind-${randomBytes(4).toString('hex')}` };
      const utf8 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
      const wideHeaders = {
        [ids.header_device.toLowerCase()]: wide.install,
        [ids.header_device_kind.toLowerCase()]: wide.kind,
        [ids.header_device_name.toLowerCase()]: utf8('é'.repeat(limits.device_name_max_bytes + 6)),
        [ids.header_device_platform.toLowerCase()]: utf8('ü'.repeat(limits.device_platform_max_bytes)),
      };
      const wr = await s.relay.post('/sessions', sessionRegistration(s.profile, owner, new Uint8Array(randomBytes(32))), wideHeaders);
      if (!e.that(wr.status === 201, `POST /sessions with a name of two-byte characters: ${said(wr)}, not 201`)) return;
      const path = `/devices/${encodeURIComponent(owner.identity)}`;
      const list = await s.relay.get(path, await s.relay.authHeaders(owner, 'GET', path, { mode: 'signed-request' }));
      const rows = rowsIn(safeJson(list));
      const wideRow = rows.find((r) => r.kind === wide.kind);
      const bytes = (v: unknown) => (typeof v === 'string' ? Buffer.byteLength(v) : 0);
      e.that(
        wideRow !== undefined && bytes(wideRow.name) <= limits.device_name_max_bytes && bytes(wideRow.platform) <= limits.device_platform_max_bytes,
        `a device named with ${limits.device_name_max_bytes + 6} two-byte characters is listed as ${JSON.stringify(wideRow ?? null)}: its name or platform is over ${limits.device_name_max_bytes} or ${limits.device_platform_max_bytes} bytes`,
      );
      for (const d of others) {
        const client = rows.find((r) => r.name === d.name)?.client;
        e.that(
          [undefined, null, '', 'app', 'web', 'cli'].includes(client as string),
          `a device whose ${ids.header_device_client} was ${d.client} is listed with client ${JSON.stringify(client)}: not dropped`,
        );
      }
      for (const d of sent) {
        const row = rows.find((r) => r.name === d.name);
        const want = { client: d.client, kind: d.kind, platform: d.platform, browser: d.browser };
        const got = row && Object.fromEntries(Object.keys(want).map((k) => [k, row[k]]));
        e.that(
          JSON.stringify(got) === JSON.stringify(want),
          `the ${d.client} device is listed as ${JSON.stringify(row ?? null)} (GET /devices: ${said(list).slice(0, 200)}), not with ${JSON.stringify(want)}`,
        );
      }
    },
  });
}

/** "a later request that omits a header leaves the stored value alone" (document 3, Device row). */
function omittedHeadersCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/devices/omitted-headers',
    lane: LANE,
    title:
      "a later session of the same install that omits the name, kind, client, platform and browser headers leaves the row's values as stored; one that sends a new name changes the name alone; the install keeps one row",
    rules: ['ra.devices.rows'],
    run: async (s, e) => {
      const owner = await s.identity();
      const ids = s.profile.ids;
      const install = `install-${randomBytes(8).toString('hex')}`;
      const full = { name: 'first laptop', kind: 'laptop', client: 'web', platform: 'linux', browser: 'firefox' };
      const open = async (what: string, extra: Record<string, string>) => {
        const headers = { [ids.header_device.toLowerCase()]: install, ...extra };
        const r = await s.relay.post('/sessions', sessionRegistration(s.profile, owner, new Uint8Array(randomBytes(32))), headers);
        return e.that(r.status === 201, `POST /sessions ${what}: ${said(r)}, not 201`);
      };
      const rowsNow = async () => {
        const path = `/devices/${encodeURIComponent(owner.identity)}`;
        const list = await s.relay.get(path, await s.relay.authHeaders(owner, 'GET', path, { mode: 'signed-request' }));
        return { rows: rowsIn(safeJson(list)), list };
      };
      const fieldsOf = (row: Record<string, unknown> | undefined) => row && Object.fromEntries(Object.keys(full).map((k) => [k, row[k]]));
      const sent = {
        [ids.header_device_name.toLowerCase()]: full.name,
        [ids.header_device_kind.toLowerCase()]: full.kind,
        [ids.header_device_client.toLowerCase()]: full.client,
        [ids.header_device_platform.toLowerCase()]: full.platform,
        [ids.header_device_browser.toLowerCase()]: full.browser,
      };
      if (!(await open('with every device header', sent))) return;
      const before = await rowsNow();
      const row = before.rows.find((r) => r.name === full.name);
      if (!e.that(row !== undefined, `the device is not listed after its first session: ${said(before.list).slice(0, 300)}`)) return;
      if (!(await open('again from the same install with only its fingerprint', {}))) return;
      const after = await rowsNow();
      const same = after.rows.filter((r) => r.id === row!.id);
      e.that(
        same.length === 1 && JSON.stringify(fieldsOf(same[0])) === JSON.stringify(full),
        `after a session that omitted the headers the install's row is ${JSON.stringify(same)}, not one row still carrying ${JSON.stringify(full)}`,
      );
      if (!(await open('again with a new name only', { [ids.header_device_name.toLowerCase()]: 'renamed laptop' }))) return;
      const renamed = (await rowsNow()).rows.filter((r) => r.id === row!.id);
      e.that(
        renamed.length === 1 && JSON.stringify(fieldsOf(renamed[0])) === JSON.stringify({ ...full, name: 'renamed laptop' }),
        `after a session that sent a new name alone the install's row is ${JSON.stringify(renamed)}, not the new name with the other values as stored`,
      );
    },
  });
}

function foreignDeviceCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/devices/foreign-device',
    lane: LANE,
    title: "an owner's revocation naming another identity's device, or a device_id that is not a string, is refused with a 4xx; the other identity's device and its session go on",
    rules: ['ra.devices.list', 'ra.errors.listed-statuses'],
    run: async (s, e) => {
      const [owner, other] = await Promise.all([s.identity(), s.identity()]);
      const theirs = await castOf(s.relay, other, owner);
      const session = await deviceSession(s, theirs, 'their phone');
      const path = `/devices/${encodeURIComponent(other.identity)}`;
      const listed = rowsIn(safeJson(await s.relay.get(path, await s.relay.authHeaders(other, 'GET', path, { mode: 'signed-request' }))));
      const device = listed.find((r) => r.name === 'their phone');
      if (!device) return e.fail(`the other identity's device is not listed: ${JSON.stringify(listed).slice(0, 200)}`);
      const mine = await castOf(s.relay, owner, other);
      for (const [what, deviceId] of [
        ["another identity's device", device.id],
        ['a device_id that is a number', 7],
        ['a device_id that is null', null],
      ] as const) {
        const r = await devicesAs(s, mine, 'owner', 'POST', deviceId as string);
        e.that(refused(r), `the owner revoking ${what}: ${said(r)}, not a 4xx`);
      }
      const still = await s.relay.pickup(other, { mode: 'challenge', sessionId: session.sessionId, seed: session.seed });
      e.that(still.status === 200, `the other identity's device session after the refused revocations: ${said(still)}, not 200`);
    },
  });
}

/** The project's device ids and revocation codes (ra.devices.id-form, ra.devices.revoke-form). */
function profileDeviceRowsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/device-rows',
    lane: LANE,
    title:
      'two sessions of one install make one row whose id is dev_ and 32 hex digits, a session without X-Svc-Device makes none; a revocation whose device_id is missing, a number or lacks dev_ is 400 invalid_request, an unknown dev_ id 404 not_found',
    rules: ['ra.devices.id-form', 'ra.devices.revoke-form'],
    run: async (s, e) => {
      const owner = await s.identity();
      const ids = s.profile.ids;
      const install = { [ids.header_device.toLowerCase()]: `install-${randomBytes(8).toString('hex')}` };
      for (const headers of [install, install, {}]) {
        const r = await s.relay.post('/sessions', sessionRegistration(s.profile, owner, new Uint8Array(randomBytes(32))), headers);
        if (!e.that(r.status === 201, `POST /sessions: ${said(r)}, not 201`)) return;
      }
      const path = `/devices/${encodeURIComponent(owner.identity)}`;
      const list = await s.relay.get(path, await s.relay.authHeaders(owner, 'GET', path, { mode: 'signed-request' }));
      const rows = rowsIn(safeJson(list));
      e.that(
        rows.length === 1 && /^dev_[0-9a-f]{32}$/.test(String(rows[0]!.id)),
        `two sessions of one install and one without X-Svc-Device are listed as ${JSON.stringify(rows).slice(0, 300)}, not one row whose id is dev_ and 32 hex digits`,
      );
      const cast = await castOf(s.relay, owner, await s.identity());
      for (const [what, deviceId, status, code] of [
        ['without device_id', undefined, 400, 'invalid_request'],
        ['whose device_id is a number', 7, 400, 'invalid_request'],
        ['whose device_id lacks dev_', '0'.repeat(32), 400, 'invalid_request'],
        ['naming a dev_ id of no device', `dev_${'0'.repeat(32)}`, 404, 'not_found'],
      ] as const) {
        const r = await devicesAs(s, cast, 'owner', 'POST', deviceId as string | undefined);
        e.that(refusedWith(r, status, code), `a revocation ${what}: ${said(r)}, not ${status} ${code}`);
      }
    },
  });
}

export function devicesMatrixChecks(t: RelayTarget): Check[] {
  return [devicesCheck(t), deviceFieldsCheck(t), omittedHeadersCheck(t), foreignDeviceCheck(t), profileDeviceRowsCheck(t)];
}
