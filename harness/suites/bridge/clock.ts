// The bridge's clock, read from the Date header of its discovery document: `auth_time` and
// `max_age` count whole seconds, so a check that needs a later authorization in a later second waits
// for the bridge's clock to turn, not for a fixed time on the harness's.
import { CheckFailure } from '../../run/verdict.ts';
import { waitUntil } from '../../run/wait.ts';
import type { BridgeSession } from './driver.ts';

/** The bridge's time in whole seconds (the harness's when the bridge sends no Date header). */
async function bridgeSecond(s: BridgeSession): Promise<number> {
  const r = await s.http.get(`${s.target.issuer}/.well-known/openid-configuration`, { headers: { accept: 'application/json' } });
  const date = Date.parse(r.headers.date ?? '');
  return Math.floor((Number.isNaN(date) ? Date.now() : date) / 1000);
}

/** Returns once the bridge's clock reads a later second than when it was called (within 5 s). */
export async function nextBridgeSecond(s: BridgeSession): Promise<void> {
  const start = await bridgeSecond(s);
  if (!(await waitUntil(async () => (await bridgeSecond(s)) > start, 5000, { everyMs: 100 }))) {
    throw new CheckFailure(`the bridge's clock (its Date header) stayed at ${new Date(start * 1000).toISOString()} for 5 s`);
  }
}
