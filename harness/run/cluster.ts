// `run --reference --cluster`: every suite's reference as several processes sharing the engines
// an operator scales out on (docs/servers/scale-out.md). The user names the engines; the
// harness never starts them, so the run checks the reference on the user's PostgreSQL, Redis
// and S3. Each suite declares the engines it needs (SuiteDefinition.clusterEngines), so a run
// of one suite asks only for its own.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ConfigError } from './exit.ts';

/** Processes per clustered server. */
export const CLUSTER_PROCESSES = 2;

export type ClusterEngine = 'database' | 'redis' | 's3';

export interface ClusterEngines {
  /** postgres://USER:PASS@HOST:PORT/DB */
  database?: string;
  /** redis://HOST:PORT, run without persistence. */
  redis?: string;
  /** http(s)://HOST:PORT/BUCKET */
  s3?: string;
  /** DRIVE_S3_ACCESS_KEY and DRIVE_S3_SECRET_KEY (and DRIVE_S3_REGION when set), for the relays' environment. */
  s3Env?: Record<string, string>;
}

interface ClusterFlags {
  reference?: boolean;
  cluster?: boolean;
  clusterDatabase?: string;
  clusterRedis?: string;
  clusterS3?: string;
}

const ENGINES: Record<ClusterEngine, { flag: string; pattern: RegExp; form: string; what: string }> = {
  database: {
    flag: '--cluster-database',
    pattern: /^postgres(ql)?:\/\/\S+$/,
    form: 'postgres://USER:PASS@HOST:PORT/DB',
    what: 'the PostgreSQL database the RP, bridge and relay processes share (each relay in a schema of its own)',
  },
  redis: {
    flag: '--cluster-redis',
    pattern: /^redis:\/\/[^\s/]+:\d+\/?$/,
    form: 'redis://HOST:PORT',
    what: 'the Redis server (no persistence) the relay processes share their state in (--shared-state)',
  },
  s3: { flag: '--cluster-s3', pattern: /^https?:\/\/[^\s/]+\/[^\s/]+\/?$/, form: 'http://HOST:PORT/BUCKET', what: 'the S3 bucket the relays keep drive chunks in (--drive-s3)' },
};

const KEY = { database: 'clusterDatabase', redis: 'clusterRedis', s3: 'clusterS3' } as const;

/** The engines a clustered relay needs. */
export const RELAY_ENGINES: readonly ClusterEngine[] = ['redis', 's3', 'database'];

/**
 * The engines of `--cluster`, checked for `needs`, or undefined without --cluster. A --cluster-*
 * flag without --cluster, or --cluster without --reference, is a configuration error.
 */
export function clusterOf(flags: Record<string, unknown>, needs: readonly ClusterEngine[] = []): ClusterEngines | undefined {
  const f = flags as ClusterFlags;
  const given = (Object.keys(ENGINES) as ClusterEngine[]).filter((e) => f[KEY[e]] !== undefined);
  if (!f.cluster) {
    if (given.length > 0)
      throw new ConfigError(`${given.map((e) => ENGINES[e].flag).join(', ')} ${given.length === 1 ? 'names an engine' : 'name the engines'} of --cluster: add --cluster (with --reference)`);
    return undefined;
  }
  if (!f.reference) throw new ConfigError('--cluster starts the reference as a cluster: use it with --reference');
  const engines: ClusterEngines = {};
  for (const e of new Set([...given, ...needs])) {
    const { flag, pattern, form, what } = ENGINES[e];
    const value = f[KEY[e]];
    if (value === undefined) throw new ConfigError(`--cluster needs ${flag} ${form}: ${what}`);
    if (!pattern.test(value)) throw new ConfigError(`${flag} ${value}: expected ${form}`);
    engines[e] = value.replace(/\/$/, '');
  }
  if (engines.s3 !== undefined) engines.s3Env = s3Keys();
  return engines;
}

function s3Keys(): Record<string, string> {
  const missing = ['DRIVE_S3_ACCESS_KEY', 'DRIVE_S3_SECRET_KEY'].filter((k) => !process.env[k]);
  if (missing.length > 0) throw new ConfigError(`--cluster-s3 needs the bucket's keys in the environment: set ${missing.join(' and ')}`);
  return Object.fromEntries(['DRIVE_S3_ACCESS_KEY', 'DRIVE_S3_SECRET_KEY', 'DRIVE_S3_REGION'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
}

/**
 * A fresh schema of `url`'s database for one server (two relays are two services: they never
 * share tables), and the URL whose connections use it; `drop()` removes it and what it holds.
 */
export async function isolatedSchema(url: string, prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE SCHEMA ${name}`);
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${name}`);
  return { url: u.href, drop: () => admin(`DROP SCHEMA IF EXISTS ${name} CASCADE`) };
}
