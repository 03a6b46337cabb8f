// The rp suite in the registry: its `run` flags (shortcuts for the targets file's `rp` role),
// the RpTarget built from them, and `--reference` (the reference RP as child processes, with an
// in-process test authority).
import { InvalidArgumentError, type Command } from 'commander';
import { limits } from '../../../schemas/ts/limits.ts';
import { normalizeOrigin, urlOrigin } from '../../../protocol/common/url.ts';
import { CLUSTER_PROCESSES, clusterOf } from '../../run/cluster.ts';
import { ConfigError } from '../../run/exit.ts';
import type { RpRole } from '../../targets/file.ts';
import type { ExternalInput, PreparedSuite, ReferenceInput, SuiteDefinition } from '../suite.ts';
import type { RpInstance, RpTarget } from './driver.ts';
import { expectedFailuresOf } from '../../run/expected.ts';

interface RpFlags {
  rp?: string;
  rpStart?: string;
  rpLoginPage?: string;
  rpProcess?: string[];
  rpBrokenStore?: string;
  rpShortWindow?: string;
  rpResumeLifetime?: number;
  rpBodyCap?: number;
  nonceStore?: string;
  rpDatabase?: string;
  rpProcesses?: number;
  requestTimeout?: number;
  profile?: boolean;
}

const DEFAULT_REQUEST_TIMEOUT_S = 20;
/** Where the project's start contract lives when the target names none (spec/http/rp.openapi.yaml). */
const PROJECT_START_PATH = '/login';

export const rpSuiteDefinition: SuiteDefinition = {
  name: 'rp',
  title: 'a relying party of document 1 (native sign-in)',
  referenceFlags: ['nonceStore', 'rpDatabase', 'rpProcesses'],
  clusterEngines: ['database'],
  options(cmd: Command): void {
    cmd
      .option('--rp <origin>', 'rp: origin of the RP under test (the audience of its requests)')
      .option('--rp-start <url>', `rp: its start contract URL (POST, Accept: application/json; default ORIGIN${PROJECT_START_PATH})`)
      .option('--rp-login-page <url>', 'rp: the page a browser opens to sign in (default: the start URL; page checks skip when it serves no page)')
      .option('--rp-process <url>', 'rp: base URL of another process of the same RP (repeatable): the replay race spreads over them', (v: string, p: string[]) => [...p, v], [])
      .option('--rp-broken-store <origin>', 'rp: an instance of the same RP whose nonce store is down, at the same start path (enables the fail-closed check)')
      .option('--rp-short-window <origin>', "rp: an instance of the same RP whose requests live a few seconds, at the same start path (the expiry checks wait out its window, not the RP's own)")
      .option('--rp-resume-lifetime <seconds>', `rp: how long its resume code lives (default ${limits.resume_code_ttl_seconds})`, positive)
      .option('--rp-body-cap <bytes>', `rp: its delivery body cap, probed just above (default the project's ${limits.rp_delivery_body_max_bytes})`, positive)
      .option('--nonce-store <store>', 'rp with --reference: sqlite (default), memory or redis://HOST:PORT')
      .option('--rp-database <url>', 'rp with --reference: postgres://USER:PASS@HOST:PORT/DB the RP processes share instead of a data directory')
      .option('--rp-processes <n>', 'rp with --reference: RP processes sharing one data directory or database (default 2, so sharing is checked)', positive);
  },

  async external({ flags, file, profile, authority }: ExternalInput): Promise<PreparedSuite | undefined> {
    const f = flags as RpFlags;
    const role = roleOf(f, file.rp);
    if (role === undefined) return undefined;
    const origin = normalizeOrigin(role.origin);
    if (origin === undefined) throw new ConfigError(`rp origin ${role.origin} is not an origin (scheme://host[:port], no path)`);
    const startUrl = role.start_url ?? `${origin}${PROJECT_START_PATH}`;
    for (const [what, url] of [['start URL', startUrl], ['login page', role.login_page_url], ...(role.processes ?? []).map((p) => ['process', p])] as const) {
      if (url !== undefined && urlOrigin(url) === undefined) throw new ConfigError(`rp ${what} ${url} is not an http(s) URL`);
    }
    // Another instance of the same RP, at the same start path.
    const instance = (what: string, given: string | undefined): RpInstance | undefined => {
      if (given === undefined) return undefined;
      const o = normalizeOrigin(given);
      if (o === undefined) throw new ConfigError(`rp ${what} origin ${given} is not an origin`);
      const start = new URL(startUrl);
      return { origin: o, startUrl: `${o}${start.pathname}${start.search}` };
    };
    const brokenStore = instance('broken-store', role.broken_store_origin);
    const shortWindow = instance('short-window', role.short_window_origin);
    const target: RpTarget = {
      profile,
      origin,
      startUrl,
      loginPage: role.login_page_url !== undefined ? { url: role.login_page_url, explicit: true } : { url: startUrl, explicit: false },
      processes: [origin, ...(role.processes ?? [])],
      authority: await authority(),
      ...(brokenStore ? { brokenStore } : {}),
      ...(shortWindow ? { shortWindow } : {}),
      requestTimeoutMs: (f.requestTimeout ?? role.request_timeout_s ?? DEFAULT_REQUEST_TIMEOUT_S) * 1000,
      declared: declaredOf(role),
    };
    return {
      suite: 'rp',
      load: () => loadRp(target),
      profileGates: f.profile ?? role.profile ?? false,
      ...(role.expected_failures ? { expectedFailures: expectedFailuresOf(role.expected_failures) } : {}),
      ...(role.check_timeout_s !== undefined ? { checkTimeoutMs: role.check_timeout_s * 1000 } : {}),
      config: { suite: 'rp', reference: false, rp: origin, rp_start: startUrl, rp_login_page: target.loginPage.url, rp_processes: target.processes, declared: target.declared },
      stop: async () => undefined,
    };
  },

  async reference({ flags, profile, log }: ReferenceInput): Promise<PreparedSuite> {
    // --cluster: the RP processes on the cluster's database unless --rp-database names another.
    const cluster = clusterOf(flags, ['database']);
    const f = { ...(flags as RpFlags), ...(cluster && flags.rpDatabase === undefined ? { rpDatabase: cluster.database } : {}) };
    const store = f.nonceStore ?? 'sqlite';
    const processes = f.rpProcesses ?? (cluster ? CLUSTER_PROCESSES : store === 'memory' ? 1 : 2);
    if (!/^(sqlite|memory|redis:\/\/[^\s/]+:\d+\/?)$/.test(store)) throw new ConfigError(`--nonce-store ${store}: use sqlite, memory or redis://HOST:PORT`);
    if (store === 'memory' && processes > 1) throw new ConfigError('--nonce-store memory cannot be shared between processes: use sqlite or redis with --rp-processes');
    if (f.rpDatabase !== undefined && !/^postgres(ql)?:\/\/\S+$/.test(f.rpDatabase)) throw new ConfigError(`--rp-database ${f.rpDatabase}: expected postgres://USER:PASS@HOST:PORT/DB`);
    if (f.rpDatabase !== undefined && store === 'memory') throw new ConfigError('--rp-database needs shared nonces: --nonce-store sqlite (then in the database) or redis://HOST:PORT');
    const { startReference } = await import('./launch.ts');
    const run = await startReference({ profile, nonceStore: store, processes, ...(f.rpDatabase ? { database: f.rpDatabase } : {}), ...(log ? { log } : {}) });
    const where = f.rpDatabase ? 'PostgreSQL' : 'one SQLite data dir';
    const target: RpTarget = { ...run.target, ...(f.requestTimeout !== undefined ? { requestTimeoutMs: f.requestTimeout * 1000 } : {}) };
    return {
      suite: 'rp',
      load: () => loadRp(target),
      profileGates: true,
      config: {
        suite: 'rp',
        reference: true,
        rp: target.origin,
        database: f.rpDatabase ? 'postgres' : 'sqlite',
        nonce_store: store,
        rp_processes: target.processes,
        authority: run.authority.adminUrl,
      },
      banner: `reference RP at ${target.origin} (${target.processes.join(', ')} on ${where}; nonce store ${store}; fail-closed ${target.brokenStore?.origin}, short-window ${target.shortWindow?.origin}), authority ${run.authority.adminUrl} (DNS ${run.authority.dnsServer})`,
      stop: () => run.stop(),
    };
  },
};

async function loadRp(target: RpTarget) {
  const { rpSuite } = await import('./index.ts');
  return rpSuite(target);
}

/** The file's `rp` role with the flags over it; undefined when neither names an RP. */
function roleOf(f: RpFlags, fromFile: RpRole | undefined): RpRole | undefined {
  const origin = f.rp ?? fromFile?.origin;
  if (origin === undefined) {
    const stray = (['rpStart', 'rpLoginPage', 'rpBrokenStore', 'rpShortWindow', 'rpResumeLifetime', 'rpBodyCap'] as const).filter((k) => f[k] !== undefined);
    if (stray.length > 0 || (f.rpProcess ?? []).length > 0) throw new ConfigError('the --rp-* options describe an RP: give its origin with --rp ORIGIN (or "rp.origin" in the targets file)');
    return undefined;
  }
  const base: RpRole = fromFile && (f.rp === undefined || normalizeOrigin(f.rp) === normalizeOrigin(fromFile.origin)) ? { ...fromFile } : { origin };
  base.origin = origin;
  if (f.rpStart !== undefined) base.start_url = f.rpStart;
  if (f.rpLoginPage !== undefined) base.login_page_url = f.rpLoginPage;
  if ((f.rpProcess ?? []).length > 0) base.processes = f.rpProcess!;
  if (f.rpBrokenStore !== undefined) base.broken_store_origin = f.rpBrokenStore;
  if (f.rpShortWindow !== undefined) base.short_window_origin = f.rpShortWindow;
  if (f.rpResumeLifetime !== undefined || f.rpBodyCap !== undefined) {
    base.declared = {
      ...base.declared,
      ...(f.rpResumeLifetime !== undefined ? { resume_code_lifetime_s: f.rpResumeLifetime } : {}),
      ...(f.rpBodyCap !== undefined ? { delivery_body_max_bytes: f.rpBodyCap } : {}),
    };
  }
  return base;
}

export function declaredOf(role: Pick<RpRole, 'declared'>): RpTarget['declared'] {
  return {
    resumeCodeLifetimeS: role.declared?.resume_code_lifetime_s ?? limits.resume_code_ttl_seconds,
    deliveryBodyMaxBytes: role.declared?.delivery_body_max_bytes ?? limits.rp_delivery_body_max_bytes,
  };
}

function positive(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}
