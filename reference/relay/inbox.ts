// The owner's side of the spool: pickup (drain on read, or read from a cursor without forgetting),
// consume, and the event stream. All owner-only (challenge, signed request, or a session's key),
// for identities local here (ra.pickup.local); others answer 404.
import { randomBytes } from 'node:crypto';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { ruleError } from '../shared/errors.ts';
import type { RelayContext } from './config.ts';
import { lookup, type Known, type DirectoryContext } from './directory.ts';
import { relaySeams } from './seams.ts';
import type { SpoolRow } from './store.ts';
import { parseJson } from '../shared/json.ts';

/** What this module uses of the relay's context. */
export type InboxContext = Pick<RelayContext, 'auth' | 'config' | 'events' | 'now' | 'store'> & DirectoryContext;

export interface OwnerCall {
  identity: string;
  req: Request;
  /** Path and query as sent. */
  target: string;
  body: Uint8Array;
}

/** The local identity the call is for, authenticated as its owner. */
export async function owner(ctx: InboxContext, call: OwnerCall): Promise<Known> {
  const known = await lookup(ctx, call.identity);
  if (!known?.local) throw ruleError(404, 'ra.errors.not-found', `${call.identity} is not hosted here (ra.pickup.not-hosted)`);
  await ctx.auth.owner(known.identity, { headers: call.req.headers, method: call.req.method, target: call.target, body: call.body }, async () => known.keys);
  return known;
}

/** A JSON answer already rendered: the app sends its text as it is. */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * A pickup's answer, spliced from the envelopes as they were received (stored as the bytes that
 * were signed, never parsed again): whatever was accepted can be returned, and nothing in one
 * envelope can make the answer fail.
 */
function rendered(rows: SpoolRow[], cursors: Readonly<Record<string, string>> = {}): RawJson {
  const list = (kind: SpoolRow['kind']) =>
    rows
      .filter((r) => r.kind === kind)
      .map((r) => r.body)
      .join(',');
  const tail = Object.entries(cursors)
    .map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v)}`)
    .join('');
  return new RawJson(`{"messages":[${list('message')}],"acks":[${list('ack')}]${tail}}`);
}

export async function pickup(ctx: InboxContext, call: OwnerCall, since: string | null): Promise<RawJson> {
  const known = await owner(ctx, call);
  // Drained in the transaction that renders the answer: only what it returns is deleted.
  // Only live envelopes: a sign-in prompt past its expires_at is never shown (ra.inbox.auth-request-expiry).
  if (since === null) return await ctx.store.drain(known.identity, (rows) => rendered(rows), ctx.now());
  if (!/^\d{1,15}$/.test(since)) throw ruleError(400, 'ra.errors.invalid-request', 'since is a cursor: a decimal string');
  const from = Number(since);
  const rows = await ctx.store.pending(known.identity, from, undefined, ctx.now());
  const last = (kind: SpoolRow['kind']) => String(rows.filter((r) => r.kind === kind).reduce((m, r) => Math.max(m, r.seq), from));
  const [cursor, ackCursor] = ctx.config.documentOnly ? ['next', 'next_ack'] : ['cursor', 'ack_cursor'];
  return rendered(rows, { [cursor]: last('message'), [ackCursor]: last('ack') });
}

export async function consume(ctx: InboxContext, call: OwnerCall): Promise<{ consumed: number; acks_consumed: number; pending: number }> {
  const known = await owner(ctx, call);
  const parsed = parseJson(call.body);
  if (!parsed.ok) throw ruleError(400, 'ra.errors.invalid-request', 'the body is not JSON');
  const b = (parsed.value ?? {}) as Record<string, unknown>;
  const cursor = (v: unknown, name: string): number => {
    if (v === undefined) return 0;
    if (typeof v !== 'string' || !/^\d{1,15}$/.test(v)) throw ruleError(400, 'ra.errors.invalid-request', `${name} is a cursor: a decimal string`);
    return Number(v);
  };
  const r = await ctx.store.consume(known.identity, ...relaySeams(ctx.config).consumeThrough(cursor(b.through, 'through'), cursor(b.ack_through, 'ack_through')));
  // `pending`: what is left to pick up (messages and acks), as the deployed client reads it.
  return { consumed: r.messages, acks_consumed: r.acks, pending: (await ctx.store.pending(known.identity)).length };
}

export async function events(ctx: InboxContext, call: OwnerCall): Promise<Response> {
  const known = await owner(ctx, call);
  const stream = await ctx.events.open(known.identity, call.req.signal);
  if (!stream) throw ruleError(429, 'ra.errors.too-many-streams', `${known.identity} has ${ctx.config.maxStreams} streams open (MAX_STREAMS_PER_IDENTITY)`);
  await relaySeams(ctx.config).streamOpened(
    known.identity,
    (identity) => ctx.store.pending(identity),
    (identity, id) => ctx.events.message(identity, id),
  );
  return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' } });
}

/** Sweeps the spool: expired mail becomes an unsigned sys.delivery.failed ack to its sender (ra.spool.failed-ack). */
export function sweepSpool(ctx: InboxContext): Promise<number> {
  return ctx.store.expire(ctx.now(), (row) => {
    const id = `sys_${randomBytes(12).toString('base64url')}`;
    const ack = { type: 'ack', id, message_id: row.id, state: 'sys.delivery.failed', sender: row.recipient, recipient: row.sender, timestamp: formatRfc3339(ctx.now()) };
    return {
      recipient: row.sender,
      kind: 'ack',
      id,
      sender: row.recipient,
      message_id: row.id,
      body: JSON.stringify(ack),
      expires_at: ctx.now() + Math.max(ctx.config.spoolTtlSeconds, limits.relay_rate_window_seconds) * 1000,
    };
  });
}
