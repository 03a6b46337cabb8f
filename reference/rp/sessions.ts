// The RP's own signed-in sessions: a 256-bit cookie (profile.ids.rp_session_cookie), stored as
// its SHA-256 next to the identity. This is what "the user is signed in" means for this RP.
import { limits } from '../../schemas/ts/limits.ts';
import type { Db } from '../stores/sqlite.ts';
import { hashSecret, newSecret, wellFormedSecret } from '../shared/secrets.ts';

/** Session lifetime: the bridge's browser-session limit (document 2) is reused for the RP's own. */
export const SESSION_TTL_SECONDS = limits.session_cookie_ttl_seconds;

export class SessionStore {
  readonly #insert;
  readonly #get;
  readonly #delete;
  readonly #sweep;
  readonly #now: () => number;

  constructor(db: Db, now: () => number = Date.now) {
    db.exec('CREATE TABLE IF NOT EXISTS rp_sessions (id_hash TEXT PRIMARY KEY, identity TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID');
    this.#insert = db.prepare('INSERT INTO rp_sessions (id_hash, identity, created_at, expires_at) VALUES (?, ?, ?, ?)');
    this.#get = db.prepare('SELECT identity, expires_at FROM rp_sessions WHERE id_hash = ?');
    this.#delete = db.prepare('DELETE FROM rp_sessions WHERE id_hash = ?');
    this.#sweep = db.prepare('DELETE FROM rp_sessions WHERE expires_at < ?');
    this.#now = now;
  }

  /** A new session for `identity`; returns the cookie value. */
  create(identity: string): string {
    const now = this.#now();
    this.#sweep.run(now);
    const secret = newSecret();
    this.#insert.run(hashSecret(secret), identity, now, now + SESSION_TTL_SECONDS * 1000);
    return secret;
  }

  identity(cookie: string | undefined): string | undefined {
    if (!wellFormedSecret(cookie)) return undefined;
    const row = this.#get.get(hashSecret(cookie)) as { identity: string; expires_at: number } | undefined;
    return row && row.expires_at >= this.#now() ? row.identity : undefined;
  }

  end(cookie: string | undefined): void {
    if (wellFormedSecret(cookie)) this.#delete.run(hashSecret(cookie));
  }
}
