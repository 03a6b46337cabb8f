// Who an identity is for this relay: its verification keys and encryption key, whether it is local
// (in the identity store, or its resolved document names this relay in `relay`:
// ra.relay.dns-locality) and, when it is not, where its relay is.
import { parseKey } from '../../protocol/common/keys.ts';
import { keyValidAt, previousKeys } from '../../protocol/common/document.ts';
import { validServiceName } from '../../protocol/common/names.ts';
import type { ResolvedIdentity } from '../../protocol/signin/resolver.ts';
import type { RelayContext } from './config.ts';

/** What this module uses of the relay's context. */
export type DirectoryContext = Pick<RelayContext, 'config' | 'now' | 'resolver' | 'store'>;

export interface Known {
  identity: string;
  /** Keys that verify its signatures now: the current one and previous ones still valid. */
  keys: Uint8Array[];
  current: Uint8Array;
  local: boolean;
  /** `host:port` of its relay (its document's `relay`), when known. */
  relay?: string;
}

/** What this relay knows of `raw`, or undefined when it is no valid name or cannot be resolved. */
export async function lookup(ctx: DirectoryContext, raw: unknown): Promise<Known | undefined> {
  const identity = validServiceName(raw);
  if (identity === undefined) return undefined;
  const row = await ctx.store.identity(identity);
  if (row) {
    const doc = JSON.parse(row.document) as Record<string, unknown>;
    const current = parseKey(row.public_key, 'signing');
    if (!current) return undefined;
    return { identity, current, keys: validKeys(current, doc, ctx.now()), local: true, relay: ctx.config.relayAddress };
  }
  let resolved: ResolvedIdentity;
  try {
    resolved = await ctx.resolver.resolve(identity);
  } catch {
    return undefined;
  }
  const relay = typeof resolved.document?.relay === 'string' ? resolved.document.relay.toLowerCase() : undefined;
  const keys = [resolved.publicKey, ...resolved.previousKeys.filter((p) => keyValidAt(resolved.publicKey, resolved.previousKeys, p.publicKey, ctx.now())).map((p) => p.publicKey)];
  return { identity, current: resolved.publicKey, keys, local: relay === ctx.config.relayAddress.toLowerCase(), ...(relay ? { relay } : {}) };
}

function validKeys(current: Uint8Array, doc: Record<string, unknown>, now: number): Uint8Array[] {
  const prev = previousKeys(doc);
  return [current, ...prev.filter((p) => keyValidAt(current, prev, p.publicKey, now)).map((p) => p.publicKey)];
}

/** The base URL of a relay address: http for loopback, https otherwise (ra.relay.dns-locality). */
export function relayBase(address: string): string {
  const host = address.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host.startsWith('127.') || host === '::1';
  return `${loopback ? 'http' : 'https'}://${address}`;
}
