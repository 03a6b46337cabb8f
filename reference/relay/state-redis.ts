// The relay's shared state in Redis (--shared-state redis://HOST:PORT): what document 3 keeps in
// memory, shared by every process behind one relay address (ra.sessions.cluster-restart). Every
// key expires with what it holds (a challenge, a nonce, a session, an offer, a bucket's window),
// so nothing outlives its life; the Redis server must run without persistence (`--save ''
// --appendonly no`), so sessions never reach a disk and restarting it is the relay's restart.
// Each spend or state step is one atomic command or Lua script: a challenge is spent by one ZREM
// answering 1, a nonce by SET NX, an offer's step by compare-and-set on its stored JSON, a bucket
// by one script that checks every bucket before charging any. Events go through pub/sub: the
// publishing process delivers to its own streams at once and ignores its own echo.
// Unreachable Redis fails closed: 503 shared_state_unavailable, never a check skipped.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { redisClient } from '../stores/redis.ts';
import { HttpError } from '../shared/errors.ts';
import { newCode, type Bucket, type Challenge, type Offer, type RelayState, type Session, type SharedEvent, type Spent } from './state.ts';

// KEYS[1] the identity's challenges (a sorted set scored by expiry); ARGV now, challenge, expiresAt, max, ttlMs.
const ADD_CHALLENGE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if over > 0 then redis.call('ZPOPMIN', KEYS[1], over) end
redis.call('PEXPIRE', KEYS[1], ARGV[5], 'GT')
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
return 1`;

// KEYS[1] the challenges; ARGV now, challenge: 1 for the one caller that removes a live one.
const SPEND_CHALLENGE = `
local at = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not at then return 0 end
redis.call('ZREM', KEYS[1], ARGV[2])
if tonumber(at) <= tonumber(ARGV[1]) then return 0 end
return 1`;

// KEYS[1] the session, KEYS[2] the identity's session ids; ARGV json, ttlMs, id.
const ADD_SESSION = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[2], 'GT')
if redis.call('PTTL', KEYS[2]) < 0 then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return 1`;

// KEYS[1] the identity's session ids; ARGV session key prefix, device id or '': the ended sessions' JSON.
const END_SESSIONS = `
local ended = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local v = redis.call('GET', ARGV[1] .. id)
  if not v then
    redis.call('SREM', KEYS[1], id)
  elseif ARGV[2] == '' or cjson.decode(v).deviceId == ARGV[2] then
    redis.call('DEL', ARGV[1] .. id)
    redis.call('SREM', KEYS[1], id)
    table.insert(ended, v)
  end
end
return ended`;

// KEYS the buckets; ARGV units, windowMs, then each bucket's limit: {0, 0} charged, or {i, pttl} of the first spent.
const CHARGE = `
local units = tonumber(ARGV[1])
for i, k in ipairs(KEYS) do
  local used = tonumber(redis.call('GET', k) or '0')
  if used + units > tonumber(ARGV[2 + i]) then
    local ttl = redis.call('PTTL', k)
    if ttl < 0 then ttl = tonumber(ARGV[2]) end
    return {i, ttl}
  end
end
for _, k in ipairs(KEYS) do
  if redis.call('INCRBY', k, units) == units then redis.call('PEXPIRE', k, ARGV[2]) end
end
return {0, 0}`;

// KEYS[1] the offer, KEYS[2] the identity's offers (scored by expiry); ARGV now, max, json, ttlMs or '', code, expiresAt.
const ADD_OFFER = `
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return -1 end
if ARGV[4] == '' then
  if not redis.call('SET', KEYS[1], ARGV[3], 'NX') then return 0 end
  redis.call('ZADD', KEYS[2], '+inf', ARGV[5])
  redis.call('PERSIST', KEYS[2])
else
  if not redis.call('SET', KEYS[1], ARGV[3], 'NX', 'PX', ARGV[4]) then return 0 end
  -- A set without a TTL is new (give it one) or holds offers kept forever (leave it so).
  local fresh = redis.call('EXISTS', KEYS[2]) == 0
  redis.call('ZADD', KEYS[2], ARGV[6], ARGV[5])
  if fresh then redis.call('PEXPIRE', KEYS[2], ARGV[4]) else redis.call('PEXPIRE', KEYS[2], ARGV[4], 'GT') end
end
return 1`;

// KEYS[1] the offer, KEYS[2] the identity's offers; ARGV before, after ('' removes), code: 1 when swapped.
const SWAP_OFFER = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
end
return 1`;

/** Each script with its number of keys (undefined: the call passes it first). */
// KEYS[1] the slots (a sorted set scored by expiry); ARGV now, id, max, until, ttlMs: 1 when taken (or held already).
const CLAIM_SLOT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

const SCRIPTS = {
  claimSlot: [CLAIM_SLOT, 1],
  addChallenge: [ADD_CHALLENGE, 1],
  spendChallenge: [SPEND_CHALLENGE, 1],
  addSession: [ADD_SESSION, 2],
  endSessions: [END_SESSIONS, 1],
  charge: [CHARGE, undefined],
  addOffer: [ADD_OFFER, 2],
  swapOffer: [SWAP_OFFER, 2],
} as const;

type Script = (...args: Array<string | number>) => Promise<unknown>;

interface StoredSession {
  id: string;
  identity: string;
  key: string;
  expiresAt: number;
  deviceId?: string;
}

const fromStored = (v: string): Session => {
  const s = JSON.parse(v) as StoredSession;
  return { id: s.id, identity: s.identity, key: new Uint8Array(Buffer.from(s.key, 'base64')), expiresAt: s.expiresAt, ...(s.deviceId !== undefined ? { deviceId: s.deviceId } : {}) };
};

/** A Redis command's default time limit: fail closed (503) rather than hold requests behind a stalled Redis. */
export const SHARED_STATE_TIMEOUT_MS = 2000;

export interface RedisStateOptions {
  /** `redis://HOST:PORT[/DB]`. */
  url: string;
  /** Keeps relays on one Redis apart: the service name and the relay address. */
  prefix: string;
  now: () => number;
  log: (line: string, level?: 'error') => void;
  timeoutMs?: number;
}

export class RedisState implements RelayState {
  readonly #redis: Redis;
  /** Pub/sub needs a connection of its own. */
  readonly #sub: Redis;
  readonly #p: string;
  readonly #channel: string;
  /** Tags this process's publications, so it skips their echo (it delivered them at once). */
  readonly #origin = randomBytes(9).toString('base64url');
  readonly #listeners: Array<(event: SharedEvent) => void> = [];
  readonly #scripts: Record<keyof typeof SCRIPTS, Script>;
  /** Each offer read with the text it was read from: its compare-and-set compares that text. */
  readonly #offerText = new WeakMap<Offer, string>();
  readonly now: () => number;

  private constructor(
    readonly options: RedisStateOptions,
    redis: Redis,
    sub: Redis,
  ) {
    this.#redis = redis;
    this.#sub = sub;
    this.#p = `${options.prefix}:`;
    this.#channel = `${options.prefix}:events`;
    this.now = options.now;
    for (const [name, [lua, numberOfKeys]] of Object.entries(SCRIPTS)) redis.defineCommand(name, numberOfKeys === undefined ? { lua } : { lua, numberOfKeys });
    const bound = redis as unknown as Record<string, Script>;
    this.#scripts = Object.fromEntries(Object.keys(SCRIPTS).map((name) => [name, bound[name]!.bind(redis)])) as Record<keyof typeof SCRIPTS, Script>;
    sub.on('message', (_channel: string, text: string) => {
      let parsed: { origin: string; event: SharedEvent };
      try {
        parsed = JSON.parse(text) as { origin: string; event: SharedEvent };
      } catch {
        return;
      }
      if (parsed.origin !== this.#origin) this.#deliver(parsed.event);
    });
  }

  /** Connects both connections and subscribes; rejects (the relay does not start) when Redis does not answer. */
  static async connect(options: RedisStateOptions): Promise<RedisState> {
    const timeout = options.timeoutMs ?? SHARED_STATE_TIMEOUT_MS;
    let warned = false;
    const open = () => {
      const r = new (redisClient())(options.url, {
        // Fail at once while Redis is away (503), rather than queue requests behind it.
        enableOfflineQueue: false,
        connectTimeout: timeout,
        commandTimeout: timeout,
        maxRetriesPerRequest: 0,
        retryStrategy: (times: number) => Math.min(times * 100, 1000),
        lazyConnect: true,
      });
      r.on('error', (error: Error) => {
        if (!warned) options.log(`shared state: ${error.message}`, 'error');
        warned = true;
      });
      r.on('ready', () => (warned = false));
      return r;
    };
    const redis = open();
    const sub = open();
    try {
      await Promise.all([redis.connect(), sub.connect()]);
      const state = new RedisState(options, redis, sub);
      await sub.subscribe(state.#channel);
      return state;
    } catch (error) {
      redis.disconnect(false);
      sub.disconnect(false);
      throw new Error(`--shared-state ${options.url}: ${(error as Error).message}`);
    }
  }

  /** Runs one Redis step; an unreachable or failing Redis answers 503 (fail closed). */
  async #run<T>(what: string, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof HttpError) throw error;
      throw new HttpError(503, 'shared_state_unavailable', `the relay's shared state cannot be reached (${what}): retry later`, 'ra.sessions.cluster-restart', { 'retry-after': '1' });
    }
  }

  addChallenge(identity: string, c: Challenge, max: number): Promise<void> {
    const ttl = Math.max(1, c.expiresAt - this.now());
    return this.#run('challenge', async () => void (await this.#scripts.addChallenge(`${this.#p}ch:${identity}`, this.now(), c.challenge, c.expiresAt, max, ttl)));
  }

  challenges(identity: string): Promise<Challenge[]> {
    return this.#run('challenge', async () => {
      const flat = await this.#redis.zrangebyscore(`${this.#p}ch:${identity}`, `(${this.now()}`, '+inf', 'WITHSCORES');
      const out: Challenge[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) out.push({ challenge: flat[i]!, expiresAt: Number(flat[i + 1]) });
      return out;
    });
  }

  spendChallenge(identity: string, challenge: string): Promise<boolean> {
    return this.#run('challenge', async () => (await this.#scripts.spendChallenge(`${this.#p}ch:${identity}`, this.now(), challenge)) === 1);
  }

  claimSlot(key: string, id: string, max: number, ttlMs: number): Promise<boolean> {
    const now = this.now();
    return this.#run('stream', async () => (await this.#scripts.claimSlot(`${this.#p}slots:${key}`, now, id, max, now + ttlMs, Math.max(1, ttlMs))) === 1);
  }

  renewSlot(key: string, id: string, ttlMs: number): Promise<void> {
    return this.#run('stream', async () => {
      await this.#redis.zadd(`${this.#p}slots:${key}`, 'XX', this.now() + ttlMs, id);
      await this.#redis.pexpire(`${this.#p}slots:${key}`, Math.max(1, ttlMs), 'GT');
    });
  }

  releaseSlot(key: string, id: string): Promise<void> {
    return this.#run('stream', async () => void (await this.#redis.zrem(`${this.#p}slots:${key}`, id)));
  }

  /** A hash of id to `bytes:until`; the key lives as long as its longest hold. */
  hold(key: string, id: string, bytes: number, ttlMs: number): Promise<void> {
    const k = `${this.#p}holds:${key}`;
    return this.#run('quota', async () => {
      await this.#redis.hset(k, id, `${bytes}:${this.now() + ttlMs}`);
      await this.#redis.pexpire(k, Math.max(1, ttlMs), 'GT');
      if ((await this.#redis.pttl(k)) < 0) await this.#redis.pexpire(k, Math.max(1, ttlMs));
    });
  }

  unhold(key: string, id: string): Promise<void> {
    return this.#run('quota', async () => void (await this.#redis.hdel(`${this.#p}holds:${key}`, id)));
  }

  holds(key: string): Promise<Map<string, number>> {
    const k = `${this.#p}holds:${key}`;
    return this.#run('quota', async () => {
      const now = this.now();
      const out = new Map<string, number>();
      const lapsed: string[] = [];
      for (const [id, v] of Object.entries(await this.#redis.hgetall(k))) {
        const [bytes, until] = v.split(':').map(Number);
        if ((until ?? 0) > now) out.set(id, bytes ?? 0);
        else lapsed.push(id);
      }
      if (lapsed.length > 0) await this.#redis.hdel(k, ...lapsed);
      return out;
    });
  }

  putValue(key: string, value: string, ttlMs: number): Promise<void> {
    return this.#run('value', async () => void (await this.#redis.set(`${this.#p}value:${key}`, value, 'PX', Math.max(1, Math.ceil(ttlMs)))));
  }

  value(key: string): Promise<string | undefined> {
    return this.#run('value', async () => (await this.#redis.get(`${this.#p}value:${key}`)) ?? undefined);
  }

  spendNonce(key: string, ttlMs: number): Promise<boolean> {
    return this.#run('nonce', async () => (await this.#redis.set(`${this.#p}nonce:${key}`, '1', 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX')) === 'OK');
  }

  addSession(s: Session): Promise<void> {
    const stored: StoredSession = { id: s.id, identity: s.identity, key: Buffer.from(s.key).toString('base64'), expiresAt: s.expiresAt, ...(s.deviceId !== undefined ? { deviceId: s.deviceId } : {}) };
    const ttl = Math.max(1, s.expiresAt - this.now());
    return this.#run('session', async () => void (await this.#scripts.addSession(`${this.#p}sess:${s.id}`, `${this.#p}sessions:${s.identity}`, JSON.stringify(stored), ttl, s.id)));
  }

  session(id: string): Promise<Session | undefined> {
    return this.#run('session', async () => {
      const v = await this.#redis.get(`${this.#p}sess:${id}`);
      const s = v === null ? undefined : fromStored(v);
      return s && s.expiresAt > this.now() ? s : undefined;
    });
  }

  removeSession(id: string): Promise<Session | undefined> {
    return this.#run('session', async () => {
      const v = await this.#redis.getdel(`${this.#p}sess:${id}`);
      if (v === null) return undefined;
      const s = fromStored(v);
      await this.#redis.srem(`${this.#p}sessions:${s.identity}`, id);
      return s.expiresAt > this.now() ? s : undefined;
    });
  }

  endSessions(identity: string, deviceId?: string): Promise<Session[]> {
    return this.#run('session', async () => {
      const ended = (await this.#scripts.endSessions(`${this.#p}sessions:${identity}`, `${this.#p}sess:`, deviceId ?? '')) as string[];
      return ended.map(fromStored);
    });
  }

  charge(buckets: readonly Bucket[], units: number, windowMs: number): Promise<Spent | undefined> {
    return this.#run('rate limit', async () => {
      const [i, ttl] = (await this.#scripts.charge(buckets.length, ...buckets.map((b) => `${this.#p}rate:${b.id}`), units, windowMs, ...buckets.map((b) => b.limit))) as [number, number];
      return i === 0 ? undefined : { spent: i - 1, resetAt: this.now() + ttl };
    });
  }

  addOffer(offer: Omit<Offer, 'code'>, max: number, keepForever: boolean): Promise<string | undefined> {
    return this.#run('pairing', async () => {
      const ttl = keepForever ? '' : String(Math.max(1, offer.expiresAt - this.now()));
      for (;;) {
        const code = newCode();
        const json = JSON.stringify({ ...offer, code });
        const r = await this.#scripts.addOffer(`${this.#p}offer:${code}`, `${this.#p}offers:${offer.identity}`, this.now(), max, json, ttl, code, offer.expiresAt);
        if (r === -1) return undefined;
        if (r === 1) return code;
      }
    });
  }

  offer(code: string): Promise<Offer | undefined> {
    return this.#run('pairing', async () => {
      const v = await this.#redis.get(`${this.#p}offer:${code}`);
      if (v === null) return undefined;
      const o = JSON.parse(v) as Offer;
      this.#offerText.set(o, v);
      return o;
    });
  }

  swapOffer(before: Offer, after: Offer | null): Promise<boolean> {
    const text = this.#offerText.get(before) ?? JSON.stringify(before);
    return this.#run(
      'pairing',
      async () => (await this.#scripts.swapOffer(`${this.#p}offer:${before.code}`, `${this.#p}offers:${before.identity}`, text, after ? JSON.stringify(after) : '', before.code)) === 1,
    );
  }

  publish(event: SharedEvent): void {
    this.#deliver(event);
    // Events are advisory (nothing is replayed; readers resume from their pickup or cursor), so a
    // publication Redis refuses is logged, not turned into the request's failure.
    this.#redis
      .publish(this.#channel, JSON.stringify({ origin: this.#origin, event }))
      .catch((error: unknown) => this.options.log(`shared state: event not published: ${(error as Error).message}`, 'error'));
  }

  subscribe(listener: (event: SharedEvent) => void): void {
    this.#listeners.push(listener);
  }

  #deliver(event: SharedEvent): void {
    for (const l of this.#listeners) {
      try {
        l(event);
      } catch (error) {
        this.options.log(`shared state: event listener failed: ${(error as Error).message}`, 'error');
      }
    }
  }

  async close(): Promise<void> {
    this.#sub.disconnect(false);
    await this.#redis.quit().catch(() => this.#redis.disconnect(false));
  }
}
