// The relay on PostgreSQL (--database): the relay and drive suites, profile included, pass
// against reference relays whose identities, spool, keystore, system files, devices and drive
// metadata live in PostgreSQL (each relay its own database), and the tables are the SQLite ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import { runChecks } from '../../harness/run/runner.ts';
import { driveSuite } from '../../harness/suites/drive/index.ts';
import { REFERENCE_DRIVE_QUOTA } from '../../harness/suites/drive/suite.ts';
import { relaySuite } from '../../harness/suites/relay/index.ts';
import { Session } from '../../harness/suites/relay/driver.ts';
import { SoftwareAuthenticator } from '../../harness/actors/relay/index.ts';
import { startRelayReference, type RelayReferenceRun } from '../../harness/suites/relay/launch.ts';
import { PostgresSql } from '../../reference/stores/postgres.ts';
import { rules } from '../../schemas/ts/rules.ts';
import { throwawayDatabase, type ThrowawayDb } from '../bridge/postgres.ts';

let dbs: ThrowawayDb[] = [];
let relay: RelayReferenceRun | undefined;

beforeAll(async () => {
  dbs = [throwawayDatabase('svc_relay'), throwawayDatabase('svc_relay')];
  relay = await startRelayReference({
    profile,
    extraArgs: ['--drive-quota', String(REFERENCE_DRIVE_QUOTA)],
    ownArgs: { a: ['--database', dbs[0]!.url], b: ['--database', dbs[1]!.url] },
  });
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  for (const db of dbs) db.drop();
}, 60_000);

const notPassed = (results: Array<{ id: string; status: string; detail?: string }>) => results.filter((r) => r.status !== 'passed').map((r) => `${r.id}: ${r.status} ${r.detail ?? ''}`);

/** A suite's checks run against the relays on PostgreSQL, the profile gating. */
async function results(load: { checks: Parameters<typeof runChecks>[0] }) {
  return (await runChecks(load.checks, { seed: 12, runs: 6, timeoutMs: 60_000, rules, profileGates: true, coverageDocs: [3] })).results;
}

describe('the relay on PostgreSQL', () => {
  it('passes the relay suite, profile included', async () => {
    const r = await results(await relaySuite(relay!.target));
    expect(r.length).toBeGreaterThan(80);
    expect(notPassed(r)).toEqual([]);
  }, 300_000);

  it('passes the drive suite, profile included', async () => {
    const r = await results(await driveSuite(relay!.target));
    expect(r.length).toBeGreaterThanOrEqual(24);
    expect(notPassed(r)).toEqual([]);
  }, 300_000);

  it('answers a value PostgreSQL cannot hold (a NUL in a keystore label) with 400, and stores nothing', async () => {
    const s = new Session(relay!.target);
    const id = await s.identity();
    const auth = new SoftwareAuthenticator(-7);
    const input = { enrollment_id: 'nul-label', kind: 'passkey', wrap: 'prf', wrapped: JSON.stringify({ iv: 'AAAA', ciphertext: 'BBBB' }), ...auth.credential(), label: 'a\u0000b' };
    const r = await s.relay.keystoreEnroll(id, input);
    expect(r.status, r.text()).toBe(400);
    expect(JSON.parse(r.text())).toMatchObject({ error: 'invalid_request' });
    const list = await s.relay.keystoreList(id);
    expect(JSON.parse(list.text())).toMatchObject({ enrollments: [] });
  });

  it('keeps what it accepted in PostgreSQL, not under its data dir', async () => {
    const sql = new PostgresSql(dbs[0]!.url);
    try {
      const count = async (table: string) => (await sql.get<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))!.n;
      expect(await count('relay_identities')).toBeGreaterThan(0);
      expect(await count('drive_nodes')).toBeGreaterThan(0);
      expect((await sql.get<{ value: string }>("SELECT value FROM relay_meta WHERE key = 'schema_version'"))!.value).toBe('2');
    } finally {
      await sql.close();
    }
  });
});
