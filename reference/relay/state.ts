// What document 3 keeps in memory, behind one interface (ra.sessions.memory,
// ra.sessions.cluster-restart): challenges, signed-request and admin nonces, sessions, pairing
// offers, rate-limit buckets and the event fan-out. One process keeps them in its own memory
// (MemoryState, the default); several processes behind one relay address share them in Redis
// (RedisState, --shared-state). Every spend is one atomic step of the state, so a challenge, a
// nonce or an offer's step is taken once whichever process serves the request.
import { randomBytes } from 'node:crypto';
import { shortCodeFrom } from '../../protocol/signin/reference.ts';
import { limits } from '../../schemas/ts/limits.ts';

export interface Challenge {
  challenge: string;
  expiresAt: number;
}

export interface Session {
  id: string;
  identity: string;
  key: Uint8Array;
  expiresAt: number;
  deviceId?: string;
}

export type OfferState = 'offered' | 'nonce' | 'revealed' | 'delivered';

/** A pairing offer; plain data (it is stored as JSON in Redis), the claim token only as its SHA-256 (hex). */
export interface Offer {
  identity: string;
  code: string;
  tokenHash: string;
  commitment: string;
  label: string;
  expiresAt: number;
  state: OfferState;
  approverNonce?: string;
  mode?: string;
  ephemeralPublicKey?: string;
  commitNonce?: string;
  sealed?: string;
}

/** What one process tells every process of the relay (itself included). */
export type SharedEvent =
  | { kind: 'message'; identity: string; id: string }
  | { kind: 'drive.changed'; drive: string; change: Record<string, unknown> & { node: string }; unfiltered: boolean }
  | { kind: 'drive.revoked'; drive: string; who: string; share: string };

export interface Bucket {
  id: string;
  limit: number;
}

/** The first spent bucket of a charge, and when it resets. */
export interface Spent {
  spent: number;
  resetAt: number;
}

export interface RelayState {
  /** Adds a live challenge of `identity`; beyond `max` live ones the oldest is dropped. */
  addChallenge(identity: string, c: Challenge, max: number): Promise<void>;
  /** The identity's live challenges, oldest first. */
  challenges(identity: string): Promise<Challenge[]>;
  /** Spends a challenge: true for exactly one caller, false when it is gone (used or expired). */
  spendChallenge(identity: string, challenge: string): Promise<boolean>;
  /** Records a nonce for `ttlMs`: false when it is already recorded (a replay). */
  spendNonce(key: string, ttlMs: number): Promise<boolean>;
  addSession(s: Session): Promise<void>;
  session(id: string): Promise<Session | undefined>;
  /** Ends one session: the ended session, if it was live. */
  removeSession(id: string): Promise<Session | undefined>;
  /** Ends every session of an identity (or of one of its devices): the ended sessions. */
  endSessions(identity: string, deviceId?: string): Promise<Session[]>;
  /**
   * Charges `units` to each bucket of a fixed window of `windowMs`, or nothing when one is spent:
   * then the index of the first spent bucket and when it resets. Synchronous in memory: it runs on
   * every envelope, and that path keeps its speed.
   */
  charge(buckets: readonly Bucket[], units: number, windowMs: number): Spent | undefined | Promise<Spent | undefined>;
  /** Stores a new offer under a fresh code: the code, or undefined when the identity already has `max` live offers. */
  addOffer(offer: Omit<Offer, 'code'>, max: number, keepForever: boolean): Promise<string | undefined>;
  offer(code: string): Promise<Offer | undefined>;
  /** Replaces the offer `before` (as read) by `after` (null: removes it); false when it changed meanwhile. */
  swapOffer(before: Offer, after: Offer | null): Promise<boolean>;
  /**
   * Takes one of `max` slots under `key` for `id` (an open event stream), held for `ttlMs` unless
   * renewed, so the slots of a process that died free themselves: false when all are taken.
   */
  claimSlot(key: string, id: string, max: number, ttlMs: number): Promise<boolean>;
  /** Holds a slot `ttlMs` longer (a live stream's keepalive). */
  renewSlot(key: string, id: string, ttlMs: number): Promise<void>;
  releaseSlot(key: string, id: string): Promise<void>;
  /** Holds `bytes` under `key` for `id` for `ttlMs` unless dropped sooner (a drive's quota: uploads in flight, upload URLs promised). */
  hold(key: string, id: string, bytes: number, ttlMs: number): Promise<void>;
  unhold(key: string, id: string): Promise<void>;
  /** The live holds under `key`: id to bytes. */
  holds(key: string): Promise<Map<string, number>>;
  /** A short-lived value every process reads (a link's proof-of-work token, a download under way). */
  putValue(key: string, value: string, ttlMs: number): Promise<void>;
  value(key: string): Promise<string | undefined>;
  /** Tells every process, this one included (this one synchronously). */
  publish(event: SharedEvent): void;
  subscribe(listener: (event: SharedEvent) => void): void;
  close(): Promise<void>;
}

/** A fresh rendezvous code. */
export const newCode = (): string => shortCodeFrom(new Uint8Array(randomBytes(limits.rendezvous_code_length)));

/** One process's memory: the state of a relay of one process (a restart forgets it). */
export class MemoryState implements RelayState {
  readonly #challenges = new Map<string, Challenge[]>();
  readonly #nonces = new Map<string, number>();
  readonly #sessions = new Map<string, Session>();
  readonly #buckets = new Map<string, { used: number; resetAt: number }>();
  readonly #offers = new Map<string, Offer>();
  readonly #slots = new Map<string, Map<string, number>>();
  readonly #values = new Map<string, { value: string; until: number }>();
  readonly #holds = new Map<string, Map<string, { bytes: number; until: number }>>();
  readonly #listeners: Array<(event: SharedEvent) => void> = [];
  #lastSweep = 0;

  constructor(readonly now: () => number) {}

  async addChallenge(identity: string, c: Challenge, max: number): Promise<void> {
    this.#sweep();
    const list = (this.#challenges.get(identity) ?? []).filter((x) => x.expiresAt > this.now());
    list.push(c);
    while (list.length > max) list.shift();
    this.#challenges.set(identity, list);
  }

  async challenges(identity: string): Promise<Challenge[]> {
    return (this.#challenges.get(identity) ?? []).filter((c) => c.expiresAt > this.now());
  }

  async spendChallenge(identity: string, challenge: string): Promise<boolean> {
    const live = this.#challenges.get(identity) ?? [];
    const i = live.findIndex((c) => c.challenge === challenge && c.expiresAt > this.now());
    if (i < 0) return false;
    live.splice(i, 1);
    return true;
  }

  async spendNonce(key: string, ttlMs: number): Promise<boolean> {
    this.#sweep();
    if ((this.#nonces.get(key) ?? 0) > this.now()) return false;
    this.#nonces.set(key, this.now() + ttlMs);
    return true;
  }

  async addSession(s: Session): Promise<void> {
    this.#sessions.set(s.id, s);
  }

  async session(id: string): Promise<Session | undefined> {
    const s = this.#sessions.get(id);
    if (s && s.expiresAt <= this.now()) {
      this.#sessions.delete(id);
      return undefined;
    }
    return s;
  }

  async removeSession(id: string): Promise<Session | undefined> {
    const s = await this.session(id);
    this.#sessions.delete(id);
    return s;
  }

  async endSessions(identity: string, deviceId?: string): Promise<Session[]> {
    const ended: Session[] = [];
    for (const [id, s] of this.#sessions) {
      if (s.identity !== identity || (deviceId !== undefined && s.deviceId !== deviceId)) continue;
      this.#sessions.delete(id);
      ended.push(s);
    }
    return ended;
  }

  charge(buckets: readonly Bucket[], units: number, windowMs: number): Spent | undefined {
    const now = this.now();
    this.#sweep();
    const found = buckets.map(({ id }) => {
      let b = this.#buckets.get(id);
      if (!b || b.resetAt <= now) this.#buckets.set(id, (b = { used: 0, resetAt: now + windowMs }));
      return b;
    });
    for (const [i, b] of found.entries()) if (b.used + units > buckets[i]!.limit) return { spent: i, resetAt: b.resetAt };
    for (const b of found) b.used += units;
    return undefined;
  }

  async addOffer(offer: Omit<Offer, 'code'>, max: number, keepForever: boolean): Promise<string | undefined> {
    if (!keepForever) for (const [code, o] of this.#offers) if (o.expiresAt <= this.now()) this.#offers.delete(code);
    let live = 0;
    for (const o of this.#offers.values()) if (o.identity === offer.identity) live++;
    if (live >= max) return undefined;
    let code: string;
    do code = newCode();
    while (this.#offers.has(code));
    this.#offers.set(code, { ...offer, code });
    return code;
  }

  async offer(code: string): Promise<Offer | undefined> {
    return this.#offers.get(code);
  }

  async swapOffer(before: Offer, after: Offer | null): Promise<boolean> {
    if (this.#offers.get(before.code) !== before) return false;
    if (after) this.#offers.set(before.code, after);
    else this.#offers.delete(before.code);
    return true;
  }

  async claimSlot(key: string, id: string, max: number, ttlMs: number): Promise<boolean> {
    const now = this.now();
    const held = this.#slots.get(key) ?? new Map<string, number>();
    for (const [k, until] of held) if (until <= now) held.delete(k);
    if (!held.has(id) && held.size >= max) return false;
    held.set(id, now + ttlMs);
    this.#slots.set(key, held);
    return true;
  }

  async renewSlot(key: string, id: string, ttlMs: number): Promise<void> {
    const held = this.#slots.get(key);
    if (held?.has(id)) held.set(id, this.now() + ttlMs);
  }

  async releaseSlot(key: string, id: string): Promise<void> {
    const held = this.#slots.get(key);
    if (held?.delete(id) && held.size === 0) this.#slots.delete(key);
  }

  async hold(key: string, id: string, bytes: number, ttlMs: number): Promise<void> {
    const m = this.#holds.get(key) ?? new Map<string, { bytes: number; until: number }>();
    m.set(id, { bytes, until: this.now() + ttlMs });
    this.#holds.set(key, m);
  }

  async unhold(key: string, id: string): Promise<void> {
    const m = this.#holds.get(key);
    if (m?.delete(id) && m.size === 0) this.#holds.delete(key);
  }

  async holds(key: string): Promise<Map<string, number>> {
    const now = this.now();
    const out = new Map<string, number>();
    for (const [id, h] of this.#holds.get(key) ?? []) {
      if (h.until > now) out.set(id, h.bytes);
      else await this.unhold(key, id);
    }
    return out;
  }

  async putValue(key: string, value: string, ttlMs: number): Promise<void> {
    this.#sweep();
    this.#values.set(key, { value, until: this.now() + ttlMs });
  }

  async value(key: string): Promise<string | undefined> {
    const v = this.#values.get(key);
    return v && v.until > this.now() ? v.value : undefined;
  }

  publish(event: SharedEvent): void {
    for (const l of this.#listeners) l(event);
  }

  subscribe(listener: (event: SharedEvent) => void): void {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {}

  #sweep(): void {
    const now = this.now();
    if (now - this.#lastSweep < 10_000) return;
    this.#lastSweep = now;
    for (const [k, until] of this.#nonces) if (until <= now) this.#nonces.delete(k);
    for (const [k, list] of this.#challenges) {
      const live = list.filter((c) => c.expiresAt > now);
      if (live.length === 0) this.#challenges.delete(k);
      else this.#challenges.set(k, live);
    }
    for (const [k, s] of this.#sessions) if (s.expiresAt <= now) this.#sessions.delete(k);
    for (const [k, b] of this.#buckets) if (b.resetAt <= now) this.#buckets.delete(k);
    for (const [k, v] of this.#values) if (v.until <= now) this.#values.delete(k);
  }
}
