// The bridge's storage: transactions, sessions, consents, authorization codes, access tokens,
// signing keys, the pairwise secret and audit events, in SQLite (`<data-dir>/bridge.sqlite`, WAL)
// or PostgreSQL (several instances), on one schema for both (schema.ts). Processes on one
// database are one bridge: every state move is a compare-and-set (`UPDATE ... WHERE status = ?`),
// so of two racing requests exactly one wins. Codes and tokens are stored as SHA-256 hashes
// (ob.code.format).
import { randomBytes } from 'node:crypto';
import type { Sql } from '../stores/sql.ts';
import { migrate } from '../stores/migrate.ts';
import { limits } from '../../schemas/ts/limits.ts';
import type { components } from '../../schemas/ts/http/bridge.ts';
import { MIGRATION_LOCK, MIGRATIONS } from './schema.ts';

/** The transaction states of document 2 (States and transitions), as spec/http/bridge.openapi.yaml lists them. */
export type TxState = components['schemas']['TransactionView']['state'];

export interface BridgeTx {
  id: string;
  clientId: string;
  redirectUri: string;
  state: string;
  nonce: string | null;
  challenge: string;
  scopes: string[];
  prompt: string | null;
  maxAge: number | null;
  bindingHash: string;
  status: TxState;
  createdAt: number;
  expiresAt: number;
  requestId: string | null;
  request: Record<string, unknown> | null;
  refCode: string | null;
  matchCode: string | null;
  requestExpiresAt: number | null;
  identity: string | null;
  delegated: boolean;
  authTime: number | null;
  keyFingerprint: string | null;
  resumeHash: string | null;
  resumeExpiresAt: number | null;
  crossDevice: boolean;
  browser: string;
  error: string | null;
  redirect: string | null;
  /** Web signer bases found for the typed ID, in order (JSON), or null. */
  signers: string[];
  /** The typed ID, the recipient of push prompts (awaiting_signature). */
  pushTo: string | null;
  pushSent: number;
  pushAt: number | null;
  pushLast: string | null;
}

export interface Session {
  identity: string;
  authTime: number;
  delegated: boolean;
  keyFingerprint: string | null;
  expiresAt: number;
}

export interface CodeRecord {
  hash: string;
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce: string | null;
  identity: string;
  scopes: string[];
  claims: string[];
  authTime: number;
  delegated: boolean;
  keyFingerprint: string | null;
  /** The public profile read when the code was issued (`profile` released), else null. */
  profile: ProfileClaims | null;
  expiresAt: number;
  spent: boolean;
}

/** The `profile` scope's claims beyond the profile URL: read from the identity's public profile. */
export interface ProfileClaims {
  name?: string;
  picture?: string;
}

export interface TokenRecord {
  hash: string;
  clientId: string;
  identity: string;
  scopes: string[];
  claims: string[];
  keyFingerprint: string | null;
  profile: ProfileClaims | null;
  issuedAt: number;
  expiresAt: number;
  revoked: boolean;
}

export interface KeyRecord {
  kid: string;
  privateJwk: string;
  publicJwk: string;
  createdAt: number;
  retiredAt: number | null;
}

/** A client registered in the console, as stored. */
export interface RegisteredClient {
  clientId: string;
  name: string;
  redirectUris: string[];
  authMethod: string;
  /** Valid secrets: the current one (expiresAt null) and, after a rotation, the previous one until it expires. */
  secrets: Array<{ hash: string; expiresAt: number | null }>;
  sector: string;
  owner: string;
  coOwners: string[];
  /** private_key_jwt: the key set pasted at registration, or the HTTPS URL it is fetched from. */
  keySet?: { jwks: Record<string, unknown> } | { jwksUri: string };
  createdAt: number;
  updatedAt: number;
}

const json = (v: unknown) => JSON.stringify(v);
const list = (s: string): string[] => JSON.parse(s) as string[];

/* eslint-disable @typescript-eslint/no-explicit-any -- rows come back untyped from better-sqlite3 */
const txOf = (r: any): BridgeTx => ({
  id: r.id,
  clientId: r.client_id,
  redirectUri: r.redirect_uri,
  state: r.state,
  nonce: r.nonce,
  challenge: r.challenge,
  scopes: list(r.scopes),
  prompt: r.prompt,
  maxAge: r.max_age,
  bindingHash: r.binding_hash,
  status: r.status,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  requestId: r.request_id,
  request: r.request === null ? null : (JSON.parse(r.request) as Record<string, unknown>),
  refCode: r.ref_code,
  matchCode: r.match_code,
  requestExpiresAt: r.request_expires_at,
  identity: r.identity,
  delegated: Number(r.delegated) === 1,
  authTime: r.auth_time,
  keyFingerprint: r.key_fingerprint,
  resumeHash: r.resume_hash,
  resumeExpiresAt: r.resume_expires_at,
  crossDevice: Number(r.cross_device) === 1,
  browser: r.browser,
  error: r.error,
  redirect: r.redirect,
  signers: typeof r.signers === 'string' ? list(r.signers) : [],
  pushTo: r.push_to ?? null,
  pushSent: Number(r.push_sent ?? 0),
  pushAt: r.push_at === null || r.push_at === undefined ? null : Number(r.push_at),
  pushLast: r.push_last ?? null,
});
const profileOf = (v: unknown): ProfileClaims | null => (typeof v === 'string' ? (JSON.parse(v) as ProfileClaims) : null);
const codeOf = (r: any): CodeRecord => ({
  hash: r.hash,
  clientId: r.client_id,
  redirectUri: r.redirect_uri,
  challenge: r.challenge,
  nonce: r.nonce,
  identity: r.identity,
  scopes: list(r.scopes),
  claims: list(r.claims),
  authTime: r.auth_time,
  delegated: Number(r.delegated) === 1,
  keyFingerprint: r.key_fingerprint,
  profile: profileOf(r.profile),
  expiresAt: r.expires_at,
  spent: Number(r.spent) === 1,
});
const tokenOf = (r: any): TokenRecord => ({
  hash: r.hash,
  clientId: r.client_id,
  identity: r.identity,
  scopes: list(r.scopes),
  claims: list(r.claims),
  keyFingerprint: r.key_fingerprint,
  profile: profileOf(r.profile),
  issuedAt: r.issued_at,
  expiresAt: r.expires_at,
  revoked: Number(r.revoked) === 1,
});
/* eslint-enable @typescript-eslint/no-explicit-any */

export interface NewTx {
  id: string;
  /** Its life (default the document's 10 minutes; shorter only for tests). */
  ttlSeconds?: number;
  clientId: string;
  redirectUri: string;
  state: string;
  nonce: string | null;
  challenge: string;
  scopes: string[];
  prompt: string | null;
  maxAge: number | null;
  bindingHash: string;
  browser: string;
}

export class BridgeStore {
  readonly sql: Sql;
  readonly #now: () => number;
  /** Told every audit event this instance records (the metrics counters). */
  onAudit: (name: string) => void = () => undefined;

  private constructor(sql: Sql, now: () => number) {
    this.sql = sql;
    this.#now = now;
  }

  /** Opens the store, running the migrations this database has not seen (once, whichever instance gets there). */
  static async open(sql: Sql, now: () => number = Date.now): Promise<BridgeStore> {
    await migrate(sql, { meta: 'bridge_meta', lockKey: MIGRATION_LOCK, steps: MIGRATIONS.map((step) => () => [step]) });
    return new BridgeStore(sql, now);
  }

  /** The issuer's pairwise secret: 32 random bytes made once (whichever process wins keeps it). */
  async pairwiseSecret(): Promise<Buffer> {
    await this.sql.run('INSERT INTO bridge_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING', ['pairwise_secret', randomBytes(limits.pairwise_secret_bytes).toString('base64url')]);
    const row = await this.sql.get<{ value: string }>('SELECT value FROM bridge_meta WHERE key = ?', ['pairwise_secret']);
    return Buffer.from(row!.value, 'base64url');
  }

  // ---- signing keys ----
  async keys(): Promise<KeyRecord[]> {
    const rows = await this.sql.all<Record<string, unknown>>('SELECT * FROM bridge_keys ORDER BY created_at DESC');
    return rows.map((r) => ({
      kid: r.kid as string,
      privateJwk: r.private_jwk as string,
      publicJwk: r.public_jwk as string,
      createdAt: Number(r.created_at),
      retiredAt: r.retired_at === null ? null : Number(r.retired_at),
    }));
  }

  /** Adds a current key and retires the others at its creation (they stay published: ob.keys.rotation). */
  async addKey(key: Omit<KeyRecord, 'retiredAt'>): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await tx.run('UPDATE bridge_keys SET retired_at = ? WHERE retired_at IS NULL', [key.createdAt]);
      await tx.run('INSERT INTO bridge_keys (kid, private_jwk, public_jwk, created_at) VALUES (?, ?, ?, ?)', [key.kid, key.privateJwk, key.publicJwk, key.createdAt]);
    });
  }

  // ---- transactions ----
  async createTx(tx: NewTx): Promise<void> {
    const now = this.#now();
    await this.sql.run(
      `INSERT INTO bridge_transactions (id, client_id, redirect_uri, state, nonce, challenge, scopes, prompt, max_age, binding_hash, status, created_at, expires_at, browser)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'identify', ?, ?, ?)`,
      [
        tx.id,
        tx.clientId,
        tx.redirectUri,
        tx.state,
        tx.nonce,
        tx.challenge,
        json(tx.scopes),
        tx.prompt,
        tx.maxAge,
        tx.bindingHash,
        now,
        now + (tx.ttlSeconds ?? limits.bridge_transaction_ttl_seconds) * 1000,
        tx.browser,
      ],
    );
  }

  async #tx(where: string, key: string): Promise<BridgeTx | undefined> {
    // No key this bridge issues holds a NUL (PostgreSQL refuses one in text): such a key is simply unknown.
    if (key.includes('\u0000')) return undefined;
    const row = await this.sql.get(`SELECT * FROM bridge_transactions WHERE ${where} = ?`, [key]);
    if (!row) return undefined;
    const tx = txOf(row);
    // ob.transaction.expiry: any unfinished state past its life becomes expired.
    if (this.#now() > tx.expiresAt && !['code_issued', 'redeemed', 'access_denied', 'expired', 'failed'].includes(tx.status)) {
      await this.move(tx.id, tx.status, 'expired');
      tx.status = 'expired';
    }
    return tx;
  }

  tx(id: string): Promise<BridgeTx | undefined> {
    return this.#tx('id', id);
  }
  txByRequestId(requestId: string): Promise<BridgeTx | undefined> {
    return this.#tx('request_id', requestId);
  }
  txByRef(code: string): Promise<BridgeTx | undefined> {
    return this.#tx('ref_code', code);
  }
  txByResume(hash: string): Promise<BridgeTx | undefined> {
    return this.#tx('resume_hash', hash);
  }

  /** Compare-and-set of the state, with other columns set in the same statement. */
  move(id: string, from: TxState, to: TxState, set: Record<string, string | number | null> = {}, db: Sql = this.sql): Promise<boolean> {
    const cols = Object.keys(set).filter((c) => /^[a-z_]+$/.test(c));
    const sql = `UPDATE bridge_transactions SET status = ?${cols.map((c) => `, ${c} = ?`).join('')} WHERE id = ? AND status = ?`;
    return db.run(sql, [to, ...cols.map((c) => set[c]), id, from]).then((n) => n === 1);
  }

  /**
   * Claims one push prompt for the request still awaited, if fewer than `max` went and the last
   * went at least `intervalMs` ago: one compare-and-set, so of racing presses one sends.
   */
  claimPush(id: string, requestId: string, now: number, max: number, intervalMs: number): Promise<boolean> {
    return this.sql
      .run(
        "UPDATE bridge_transactions SET push_sent = push_sent + 1, push_at = ?, push_last = NULL WHERE id = ? AND status = 'awaiting_signature' AND request_id = ? AND push_sent < ? AND (push_at IS NULL OR push_at <= ?)",
        [now, id, requestId, max, now - intervalMs],
      )
      .then((n) => n === 1);
  }

  async pushDone(id: string, outcome: 'sent' | 'failed'): Promise<void> {
    await this.sql.run('UPDATE bridge_transactions SET push_last = ? WHERE id = ?', [outcome, id]);
  }

  async extend(id: string, expiresAt: number): Promise<void> {
    await this.sql.run('UPDATE bridge_transactions SET expires_at = CASE WHEN expires_at > ? THEN expires_at ELSE ? END WHERE id = ?', [expiresAt, expiresAt, id]);
  }

  // ---- sessions ----
  async createSession(hash: string, s: Session): Promise<void> {
    await this.sql.run('INSERT INTO bridge_sessions (hash, identity, auth_time, delegated, key_fingerprint, expires_at) VALUES (?, ?, ?, ?, ?, ?)', [
      hash,
      s.identity,
      s.authTime,
      s.delegated ? 1 : 0,
      s.keyFingerprint,
      s.expiresAt,
    ]);
  }
  async session(hash: string): Promise<Session | undefined> {
    const r = await this.sql.get<Record<string, unknown>>('SELECT * FROM bridge_sessions WHERE hash = ? AND expires_at > ?', [hash, this.#now()]);
    if (!r) return undefined;
    return { identity: r.identity as string, authTime: Number(r.auth_time), delegated: Number(r.delegated) === 1, keyFingerprint: r.key_fingerprint as string | null, expiresAt: Number(r.expires_at) };
  }
  async endSession(hash: string): Promise<void> {
    await this.sql.run('DELETE FROM bridge_sessions WHERE hash = ?', [hash]);
  }

  // ---- consents ----
  async consent(identity: string, clientId: string): Promise<string[] | undefined> {
    const r = await this.sql.get<{ claims: string }>('SELECT claims FROM bridge_consents WHERE identity = ? AND client_id = ?', [identity, clientId]);
    return r ? list(r.claims) : undefined;
  }
  async saveConsent(identity: string, clientId: string, claims: string[]): Promise<void> {
    const now = this.#now();
    await this.sql.run(
      'INSERT INTO bridge_consents (identity, client_id, claims, first_use, last_use) VALUES (?, ?, ?, ?, ?) ON CONFLICT (identity, client_id) DO UPDATE SET claims = excluded.claims, last_use = excluded.last_use',
      [identity, clientId, json(claims), now, now],
    );
  }
  async consents(identity: string): Promise<Array<{ clientId: string; claims: string[]; firstUse: number; lastUse: number }>> {
    const rows = await this.sql.all<Record<string, unknown>>('SELECT * FROM bridge_consents WHERE identity = ? ORDER BY last_use DESC', [identity]);
    return rows.map((r) => ({ clientId: r.client_id as string, claims: list(r.claims as string), firstUse: Number(r.first_use), lastUse: Number(r.last_use) }));
  }
  /** Revoking an app: the consent goes and its live access tokens are revoked (ob.consent.record). */
  async revokeConsent(identity: string, clientId: string): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await tx.run('DELETE FROM bridge_consents WHERE identity = ? AND client_id = ?', [identity, clientId]);
      await tx.run('UPDATE bridge_tokens SET revoked = 1 WHERE identity = ? AND client_id = ?', [identity, clientId]);
    });
  }

  /**
   * Issues a code in the same database transaction that marks the sign-in finished
   * (ob.code.same-db-transaction): the state move and the insert commit together or not at all.
   */
  issueCode(txId: string, from: TxState, code: Omit<CodeRecord, 'spent'>, redirect: string): Promise<boolean> {
    return this.sql.transaction(async (tx) => {
      if (!(await this.move(txId, from, 'code_issued', { redirect }, tx))) return false;
      await tx.run(
        `INSERT INTO bridge_codes (hash, client_id, redirect_uri, challenge, nonce, identity, scopes, claims, auth_time, delegated, key_fingerprint, profile, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          code.hash,
          code.clientId,
          code.redirectUri,
          code.challenge,
          code.nonce,
          code.identity,
          json(code.scopes),
          json(code.claims),
          code.authTime,
          code.delegated ? 1 : 0,
          code.keyFingerprint,
          code.profile === null ? null : json(code.profile),
          code.expiresAt,
        ],
      );
      return true;
    });
  }

  async code(hash: string): Promise<CodeRecord | undefined> {
    const r = await this.sql.get('SELECT * FROM bridge_codes WHERE hash = ?', [hash]);
    return r ? codeOf(r) : undefined;
  }

  /** Spends an unspent code (compare-and-set); false when it was already spent. */
  async spendCode(hash: string): Promise<boolean> {
    return (await this.sql.run('UPDATE bridge_codes SET spent = 1 WHERE hash = ? AND spent = 0', [hash])) === 1;
  }

  /**
   * Spends an unspent code and stores the token it buys, in one database transaction; false when
   * the code was already spent. Group-committed with the other redemptions of this event-loop
   * turn (each its own savepoint): /token's hot path takes no transaction of its own, which would
   * hold every other statement of the process until its commit.
   */
  redeem(codeHash: string, t: Omit<TokenRecord, 'revoked'>): Promise<boolean> {
    return this.sql.batch(async (tx) => {
      if ((await tx.run('UPDATE bridge_codes SET spent = 1 WHERE hash = ? AND spent = 0', [codeHash])) !== 1) return false;
      await tx.run('INSERT INTO bridge_tokens (hash, client_id, identity, scopes, claims, key_fingerprint, profile, issued_at, expires_at, code_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
        t.hash,
        t.clientId,
        t.identity,
        json(t.scopes),
        json(t.claims),
        t.keyFingerprint,
        t.profile === null ? null : json(t.profile),
        t.issuedAt,
        t.expiresAt,
        codeHash,
      ]);
      return true;
    });
  }

  /** svc-oauth clients suspend: the application stops at once, its live tokens with it. */
  async suspend(clientId: string): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await tx.run('INSERT INTO bridge_suspended (client_id, at) VALUES (?, ?) ON CONFLICT (client_id) DO NOTHING', [clientId, this.#now()]);
      await tx.run('UPDATE bridge_tokens SET revoked = 1 WHERE client_id = ?', [clientId]);
    });
  }

  async suspendedClients(): Promise<string[]> {
    return (await this.sql.all<{ client_id: string }>('SELECT client_id FROM bridge_suspended')).map((r) => r.client_id);
  }

  // ---- registered clients (the developer console) ----
  async registeredClients(): Promise<RegisteredClient[]> {
    const rows = await this.sql.all<Record<string, unknown>>('SELECT * FROM bridge_clients ORDER BY created_at');
    return rows.map((r) => ({
      clientId: r.client_id as string,
      name: r.name as string,
      redirectUris: list(r.redirect_uris as string),
      authMethod: r.auth_method as string,
      secrets: JSON.parse(r.secrets as string) as RegisteredClient['secrets'],
      sector: r.sector as string,
      owner: r.owner as string,
      coOwners: list(r.co_owners as string),
      ...(typeof r.key_set === 'string' ? { keySet: JSON.parse(r.key_set) as NonNullable<RegisteredClient['keySet']> } : {}),
      createdAt: Number(r.created_at),
      updatedAt: Number(r.updated_at),
    }));
  }

  /** Inserts a client unless its owner already has `limit` (the per-owner limit is checked in the same transaction). */
  async createClient(c: RegisteredClient, limit: number): Promise<boolean> {
    return this.sql.transaction(async (tx) => {
      const n = await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM bridge_clients WHERE owner = ?', [c.owner]);
      if (Number(n?.n ?? 0) >= limit) return false;
      await tx.run(
        'INSERT INTO bridge_clients (client_id, name, redirect_uris, auth_method, secrets, sector, owner, co_owners, key_set, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [c.clientId, c.name, json(c.redirectUris), c.authMethod, json(c.secrets), c.sector, c.owner, json(c.coOwners), c.keySet ? json(c.keySet) : null, c.createdAt, c.updatedAt],
      );
      return true;
    });
  }

  async updateClient(c: RegisteredClient): Promise<void> {
    await this.sql.run('UPDATE bridge_clients SET name = ?, redirect_uris = ?, secrets = ?, co_owners = ?, updated_at = ? WHERE client_id = ?', [
      c.name,
      json(c.redirectUris),
      json(c.secrets),
      json(c.coOwners),
      this.#now(),
      c.clientId,
    ]);
  }

  /** Deleting a client: it, its consents and its live tokens go. */
  async deleteClient(clientId: string): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await tx.run('DELETE FROM bridge_clients WHERE client_id = ?', [clientId]);
      await tx.run('DELETE FROM bridge_consents WHERE client_id = ?', [clientId]);
      await tx.run('UPDATE bridge_tokens SET revoked = 1 WHERE client_id = ?', [clientId]);
    });
  }

  /** ob.code.replay-revokes: every token the first redemption issued. */
  async revokeTokensOfCode(codeHash: string): Promise<void> {
    await this.sql.run('UPDATE bridge_tokens SET revoked = 1 WHERE code_hash = ?', [codeHash]);
  }

  // ---- tokens ----
  async saveToken(t: Omit<TokenRecord, 'revoked'>, codeHash: string | null): Promise<void> {
    await this.sql.run('INSERT INTO bridge_tokens (hash, client_id, identity, scopes, claims, key_fingerprint, profile, issued_at, expires_at, code_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      t.hash,
      t.clientId,
      t.identity,
      json(t.scopes),
      json(t.claims),
      t.keyFingerprint,
      t.profile === null ? null : json(t.profile),
      t.issuedAt,
      t.expiresAt,
      codeHash,
    ]);
  }
  async token(hash: string): Promise<TokenRecord | undefined> {
    const r = await this.sql.get('SELECT * FROM bridge_tokens WHERE hash = ?', [hash]);
    return r ? tokenOf(r) : undefined;
  }
  async revokeToken(hash: string): Promise<void> {
    await this.sql.run('UPDATE bridge_tokens SET revoked = 1 WHERE hash = ?', [hash]);
  }

  /** Recent sign-ins of an identity (for /account). */
  async recentSignins(identity: string, limit = 20): Promise<Array<{ at: number; clientId: string; delegated: boolean; browser: string }>> {
    const rows = await this.sql.all<{ at: number; detail: string }>("SELECT at, detail FROM bridge_audit WHERE name = 'signin.succeeded' AND actor = ? ORDER BY at DESC LIMIT ?", [identity, limit]);
    return rows.map((r) => {
      const d = JSON.parse(r.detail) as { client_id: string; delegated: boolean; browser?: string };
      return { at: Number(r.at), clientId: d.client_id, delegated: d.delegated, browser: d.browser ?? 'a browser' };
    });
  }

  /**
   * Deletes what has outlived its use (ob.retention): audit events after 90 days; transactions,
   * codes, sessions and access tokens once expired (a day's grace for support questions).
   * Returns how many rows went.
   */
  async sweep(): Promise<number> {
    const now = this.#now();
    const grace = now - 86_400_000;
    let n = 0;
    n += await this.sql.run('DELETE FROM bridge_audit WHERE at < ?', [now - limits.audit_retention_seconds * 1000]);
    n += await this.sql.run('DELETE FROM bridge_transactions WHERE expires_at < ?', [grace]);
    n += await this.sql.run('DELETE FROM bridge_codes WHERE expires_at < ?', [grace]);
    n += await this.sql.run('DELETE FROM bridge_tokens WHERE expires_at < ?', [grace]);
    n += await this.sql.run('DELETE FROM bridge_sessions WHERE expires_at < ?', [grace]);
    return n;
  }

  // ---- audit (ob.audit.names) ----
  async audit(name: string, actor: string | null, detail: Record<string, unknown> = {}): Promise<void> {
    this.onAudit(name);
    await this.sql.run('INSERT INTO bridge_audit (id, at, name, actor, detail) VALUES (?, ?, ?, ?, ?)', [randomBytes(12).toString('base64url'), this.#now(), name, actor, json(detail)]);
  }

  /** ob.health: the database reads. */
  async healthy(): Promise<boolean> {
    try {
      await this.sql.get('SELECT 1 AS one');
      return true;
    } catch {
      return false;
    }
  }
}
