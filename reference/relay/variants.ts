// Deliberately broken relay behaviours kept out of the request path (hidden --break flags, only
// with SVC_REFERENCE_ALLOW_BREAKAGE=1): wrappers installed at start, each breaking one rule.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Auth, Session } from './auth.ts';

/**
 * sessions-persisted breaks ra.sessions.memory: sessions are written beside the database and read
 * back at start, so they outlive a restart.
 */
export async function persistSessions(auth: Auth, dataDir: string): Promise<void> {
  const file = join(dataDir, 'sessions.json');
  const saved: Array<Omit<Session, 'key'> & { key: string }> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : [];
  const add = auth.addSession.bind(auth);
  for (const s of saved) await add({ ...s, key: new Uint8Array(Buffer.from(s.key, 'base64')) });
  auth.addSession = async (s) => {
    await add(s);
    saved.push({ ...s, key: Buffer.from(s.key).toString('base64') });
    writeFileSync(file, JSON.stringify(saved));
  };
}
