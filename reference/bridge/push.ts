// Push to the app (document 2, Authentication 7): "Send to my app" hands an encrypted
// `sys.auth.request` to the operator's push command (OAUTH_PUSH_CLI), which sends it from the
// bridge's own service ID (OAUTH_PUSH_IDENTITY, its key under OAUTH_PUSH_HOME) through its relay.
// At most three prompts per sign-in, 15 seconds apart, counted in the store so that every
// instance on one database sees the same count; the body is the public request the QR code
// shows, the application's name and host and the expiry, never the match code.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { encodeObject } from '../../protocol/common/codec.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import type { components } from '../../schemas/ts/http/bridge.ts';
import type { components as objects } from '../../schemas/ts/objects.ts';
import type { ClientRegistry } from './clients.ts';
import { PATHS } from './paths.ts';
import type { BridgeSeams } from './seams.ts';
import type { BridgeStore, BridgeTx } from './store.ts';

export interface PushConfig {
  /** OAUTH_PUSH_IDENTITY: the bridge's own service ID, the sender of every prompt. */
  identity: string;
  /** OAUTH_PUSH_HOME: where its key file (`key.json`, as `svc-conformance relay keygen` writes it) lives. */
  home: string;
  /** OAUTH_PUSH_CLI: a shell command that sends one message (`svc-conformance relay send --relay URL ...`). */
  cli: string;
  /** Seconds between prompts (the document's 15; shorter only for tests, declared to the suite). */
  intervalSeconds: number;
}

/** What push reads of the bridge's context (context.ts, which holds this module's PushConfig). */
export interface PushContext {
  config: { issuer: string };
  seams: Pick<BridgeSeams, 'pushLimits' | 'promptExtras' | 'promptType'>;
  clients: Pick<ClientRegistry, 'get'>;
  store: Pick<BridgeStore, 'claimPush' | 'pushDone' | 'audit'>;
  now: () => number;
  log: (line: string, level?: 'error') => void;
}

type AuthRequest = objects['schemas']['AuthRequest'];
export type PushView = NonNullable<components['schemas']['TransactionView']['push']>;

/** The key file the push command signs with. */
export const pushKeyFile = (push: PushConfig): string => join(push.home, 'key.json');

const limitsOf = (ctx: PushContext, push: PushConfig) => ctx.seams.pushLimits(limits.push_prompts_max, push.intervalSeconds * 1000);

/** What the waiting page and the status view show of push (ob.contract.push). */
export function pushView(ctx: PushContext, push: PushConfig, tx: BridgeTx): PushView {
  const { max, intervalMs } = limitsOf(ctx, push);
  const out: PushView = { identity: push.identity, sent: tx.pushSent, remaining: Math.max(0, Math.min(limits.push_prompts_max, max) - tx.pushSent) };
  const next = tx.pushAt === null ? 0 : tx.pushAt + intervalMs;
  if (out.remaining > 0 && next > ctx.now()) out.next_at = formatRfc3339(next);
  if (tx.pushLast === 'sent' || tx.pushLast === 'failed') out.last = tx.pushLast;
  return out;
}

/** The prompt's plaintext (spec/objects/auth-request.schema.json). */
export function promptBody(ctx: PushContext, tx: BridgeTx): AuthRequest {
  const client = ctx.clients.get(tx.clientId);
  return {
    version: 1,
    request_uri: `${ctx.config.issuer}${PATHS.reference}${tx.refCode}`,
    request: encodeObject(tx.request!),
    app: { name: client?.name ?? tx.clientId, host: new URL(tx.redirectUri).host },
    expires_at: formatRfc3339(tx.requestExpiresAt!),
    ...ctx.seams.promptExtras(tx.matchCode),
  };
}

/**
 * One prompt, if the sign-in may still send one: the count and time are claimed atomically
 * first (of two racing presses one sends), then the command runs. `undefined` when none is due.
 */
export async function sendPrompt(ctx: PushContext, push: PushConfig, tx: BridgeTx): Promise<'sent' | 'failed' | undefined> {
  const { max, intervalMs } = limitsOf(ctx, push);
  const now = ctx.now();
  if (tx.pushTo === null || !(await ctx.store.claimPush(tx.id, tx.requestId!, now, max, intervalMs))) return undefined;
  const type = ctx.seams.promptType(vocabulary.message_types.auth_request);
  const args = ['--key', pushKeyFile(push), '--to', tx.pushTo, ...(type ? ['--type', type] : []), '--expires-at', formatRfc3339(tx.requestExpiresAt!), '--text', '-'];
  const result = await runCommand(push.cli, args, JSON.stringify(promptBody(ctx, tx)));
  const outcome = result.code === 0 ? 'sent' : 'failed';
  await ctx.store.pushDone(tx.id, outcome);
  await ctx.store.audit(`push.${outcome}`, tx.pushTo, { client_id: tx.clientId, ...(outcome === 'failed' ? { why: result.output.slice(-300) } : {}) });
  if (outcome === 'failed') ctx.log(`push to ${tx.pushTo} failed (exit ${result.code}): ${result.output.trim().slice(-300)}`, 'error');
  return outcome;
}

/** Runs the operator's command line with our arguments appended as words (never re-parsed by the shell). */
function runCommand(cli: string, args: string[], stdin: string, timeoutMs = 30_000): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', `${cli} "$@"`, 'push', ...args], { stdio: ['pipe', 'pipe', 'pipe'], timeout: timeoutMs });
    let output = '';
    const keep = (chunk: Buffer) => void (output = (output + chunk.toString('utf8')).slice(-4096));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (error) => resolve({ code: -1, output: error.message }));
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}
