// One relay as several reference relay processes behind a round-robin front (harness/run/front.ts),
// as an operator runs it behind a load balancer: every process names the front's address
// (--relay-address), shares its state in one Redis (--shared-state), and keeps its durable state
// either in one PostgreSQL database (--database) or, until the relay takes one, in one shared
// --data-dir (SQLite WAL). The relay's restart is every process's restart plus forgetting what
// it shares in Redis (ra.sessions.cluster-restart): a restart of the processes alone keeps
// sessions, which is right for a cluster but not what the durability checks call a restart.
import { Redis } from 'ioredis';
import type { ReferenceChild } from '../../run/spawn.ts';
import { startFront, type Front } from '../../run/front.ts';

export interface RelayClusterOptions {
  /** Service name: the relay's keys in Redis start with `<name>-relay:<relay address>:`. */
  serviceName: string;
  processes: number;
  /** Every flag but --port, --relay-address, --shared-state and --database. */
  args: string[];
  /** redis://HOST:PORT */
  redis: string;
  /** postgres://...: each process gets --database; absent, they share the --data-dir in `args`. */
  database?: string;
  /** Starts one `svc-reference relay` (the caller's spawner, with its log and environment). */
  spawn(args: string[]): Promise<ReferenceChild>;
}

export interface RelayCluster {
  front: Front;
  /** The front's URL: the relay's one address. */
  url: string;
  /** The processes behind the front, in start order (replaced on restart). */
  processes(): ReferenceChild[];
  /** Every process stopped, the relay's shared state forgotten, every process started again on its port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRelayCluster(options: RelayClusterOptions): Promise<RelayCluster> {
  // The front listens first: its address is the relay address every process publishes.
  const front = await startFront({ backends: [] });
  const address = `${front.host}:${front.port}`;
  // A loaded runner (a whole test run on two cores) can hold a Redis answer past the relay's 2 s
  // default, and the relay would rightly answer 503: the harness's cluster allows 10 s.
  const shared = ['--relay-address', address, '--shared-state', options.redis, '--shared-state-timeout', '10000', ...(options.database ? ['--database', options.database] : [])];
  let children: ReferenceChild[] = [];
  const startAll = async (ports: string[], together: boolean) => {
    // The first start one after the other: the first process creates the shared database's tables.
    // A restart finds them made, and starts every process at once (the durability checks race SPOOL_TTL).
    const spawn = (port: string) => options.spawn(['--port', port, ...options.args, ...shared]);
    if (together) {
      const started = await Promise.allSettled(ports.map(spawn));
      for (const x of started) if (x.status === 'fulfilled') children.push(x.value);
      const failed = started.find((x) => x.status === 'rejected');
      if (failed) throw failed.reason;
    } else for (const port of ports) children.push(await spawn(port));
    front.setBackends(children.map((c) => ({ host: new URL(c.url).hostname, port: Number(new URL(c.url).port) })));
  };
  try {
    await startAll(
      Array.from({ length: options.processes }, () => '0'),
      false,
    );
  } catch (error) {
    await Promise.all(children.map((c) => c.stop()));
    await front.close();
    throw error;
  }
  return {
    front,
    url: front.url,
    processes: () => [...children],
    async restart() {
      const ports = children.map((c) => new URL(c.url).port);
      await Promise.all(children.map((c) => c.stop()));
      children = [];
      await forgetSharedState(options.redis, `${options.serviceName}-relay:${address}:`);
      await startAll(ports, true);
    },
    async stop() {
      await Promise.all(children.map((c) => c.stop()));
      await front.close();
    },
  };
}

/** Deletes the relay's keys in Redis (only its prefix: the server may hold other relays' state). */
async function forgetSharedState(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
