// The bridge's tables, one schema for SQLite and PostgreSQL, and the steps that migrate a database
// to it (store.ts runs them when it opens).

/**
 * One schema for SQLite and PostgreSQL (times in milliseconds as BIGINT; flags as INTEGER 0/1),
 * migrated by version: `bridge_meta.schema_version` says which steps have run.
 */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS bridge_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bridge_keys (kid TEXT PRIMARY KEY, private_jwk TEXT NOT NULL, public_jwk TEXT NOT NULL, created_at BIGINT NOT NULL, retired_at BIGINT);
CREATE TABLE IF NOT EXISTS bridge_transactions (
  id TEXT PRIMARY KEY, client_id TEXT NOT NULL, redirect_uri TEXT NOT NULL, state TEXT NOT NULL, nonce TEXT, challenge TEXT NOT NULL,
  scopes TEXT NOT NULL, prompt TEXT, max_age BIGINT, binding_hash TEXT NOT NULL, status TEXT NOT NULL, created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL, request_id TEXT UNIQUE, request TEXT, ref_code TEXT UNIQUE, match_code TEXT, request_expires_at BIGINT,
  identity TEXT, delegated INTEGER NOT NULL DEFAULT 0, auth_time BIGINT, key_fingerprint TEXT, resume_hash TEXT UNIQUE,
  resume_expires_at BIGINT, cross_device INTEGER NOT NULL DEFAULT 0, browser TEXT NOT NULL, error TEXT, redirect TEXT);
CREATE TABLE IF NOT EXISTS bridge_sessions (hash TEXT PRIMARY KEY, identity TEXT NOT NULL, auth_time BIGINT NOT NULL, delegated INTEGER NOT NULL,
  key_fingerprint TEXT, expires_at BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS bridge_consents (identity TEXT NOT NULL, client_id TEXT NOT NULL, claims TEXT NOT NULL, first_use BIGINT NOT NULL,
  last_use BIGINT NOT NULL, PRIMARY KEY (identity, client_id));
CREATE TABLE IF NOT EXISTS bridge_codes (hash TEXT PRIMARY KEY, client_id TEXT NOT NULL, redirect_uri TEXT NOT NULL, challenge TEXT NOT NULL,
  nonce TEXT, identity TEXT NOT NULL, scopes TEXT NOT NULL, claims TEXT NOT NULL, auth_time BIGINT NOT NULL, delegated INTEGER NOT NULL,
  key_fingerprint TEXT, expires_at BIGINT NOT NULL, spent INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS bridge_tokens (hash TEXT PRIMARY KEY, client_id TEXT NOT NULL, identity TEXT NOT NULL, scopes TEXT NOT NULL,
  claims TEXT NOT NULL, key_fingerprint TEXT, issued_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, revoked INTEGER NOT NULL DEFAULT 0,
  code_hash TEXT);
CREATE INDEX IF NOT EXISTS bridge_tokens_code ON bridge_tokens (code_hash);
CREATE TABLE IF NOT EXISTS bridge_audit (id TEXT PRIMARY KEY, at BIGINT NOT NULL, name TEXT NOT NULL, actor TEXT, detail TEXT);
CREATE INDEX IF NOT EXISTS bridge_audit_actor ON bridge_audit (actor, at);`,
  // 2: applications the operator suspended (svc-oauth clients suspend).
  `CREATE TABLE IF NOT EXISTS bridge_suspended (client_id TEXT PRIMARY KEY, at BIGINT NOT NULL);`,
  // 3: clients registered in the developer console (secrets: [{hash, expires_at}], SHA-256 only).
  `CREATE TABLE IF NOT EXISTS bridge_clients (client_id TEXT PRIMARY KEY, name TEXT NOT NULL, redirect_uris TEXT NOT NULL, auth_method TEXT NOT NULL,
  secrets TEXT NOT NULL, sector TEXT NOT NULL, owner TEXT NOT NULL, co_owners TEXT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS bridge_clients_owner ON bridge_clients (owner);`,
  // 4: the web signers found for the typed ID, in the document's order (ob.native.find-signer).
  `ALTER TABLE bridge_transactions ADD COLUMN signers TEXT;`,
  // 5: the public profile read at consent time travels with the code and its token (ob.token.claims).
  `ALTER TABLE bridge_codes ADD COLUMN profile TEXT;
ALTER TABLE bridge_tokens ADD COLUMN profile TEXT;`,
  // 6: a console client's private_key_jwt key set, pasted ({jwks}) or linked ({jwksUri}).
  `ALTER TABLE bridge_clients ADD COLUMN key_set TEXT;`,
  // 7: push to the app: the typed ID the prompts go to, how many went, when, and how the last one ended.
  `ALTER TABLE bridge_transactions ADD COLUMN push_to TEXT;
ALTER TABLE bridge_transactions ADD COLUMN push_sent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bridge_transactions ADD COLUMN push_at BIGINT;
ALTER TABLE bridge_transactions ADD COLUMN push_last TEXT;`,
];

/** The advisory lock key under which instances on one PostgreSQL migrate the schema. */
export const MIGRATION_LOCK = 0x5bc0b1d6;
