// The RP's own signed-in sessions: a 256-bit cookie (profile.ids.rp_session_cookie), stored as
// its SHA-256 next to the identity, in SQLite or PostgreSQL (table rp_sessions, ./schema.ts).
// This is what "the user is signed in" means for this RP, on whichever process it asks.
import { limits } from '../../schemas/ts/limits.ts';
import type { Sql } from '../stores/sql.ts';
import { hashSecret, newSecret, wellFormedSecret } from '../shared/secrets.ts';

/** Session lifetime: the bridge's browser-session limit (document 2) is reused for the RP's own. */
export const SESSION_TTL_SECONDS = limits.session_cookie_ttl_seconds;

export class SessionStore {
  readonly #sql: Sql;
  readonly #now: () => number;
  #lastSweep = 0;

  /** Over a database whose schema ./schema.ts has migrated. */
  constructor(sql: Sql, now: () => number = Date.now) {
    this.#sql = sql;
    this.#now = now;
  }

  /** A new session for `identity`; returns the cookie value. */
  async create(identity: string): Promise<string> {
    const now = this.#now();
    // Expired rows are only clutter (`identity` checks the time): swept once a minute per process.
    if (now - this.#lastSweep > 60_000) {
      this.#lastSweep = now;
      await this.#sql.run('DELETE FROM rp_sessions WHERE expires_at < ?', [now]);
    }
    const secret = newSecret();
    await this.#sql.run('INSERT INTO rp_sessions (id_hash, identity, created_at, expires_at) VALUES (?, ?, ?, ?)', [hashSecret(secret), identity, now, now + SESSION_TTL_SECONDS * 1000]);
    return secret;
  }

  async identity(cookie: string | undefined): Promise<string | undefined> {
    if (!wellFormedSecret(cookie)) return undefined;
    const row = await this.#sql.get<{ identity: string; expires_at: number }>('SELECT identity, expires_at FROM rp_sessions WHERE id_hash = ?', [hashSecret(cookie)]);
    return row && row.expires_at >= this.#now() ? row.identity : undefined;
  }

  async end(cookie: string | undefined): Promise<void> {
    if (wellFormedSecret(cookie)) await this.#sql.run('DELETE FROM rp_sessions WHERE id_hash = ?', [hashSecret(cookie)]);
  }
}
