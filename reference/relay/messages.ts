// POST /messages and POST /acks, in the order document 3 gives (ra.messages.*, ra.acks.*): the
// body cap (413, before parsing), the envelope's fields (400), encryption_required (400), the
// at-least-one-local rule (403), the rate limits (429), then the signature or session (401); only
// then is the envelope stored in the local inbox or forwarded as signed to the recipient's relay.
import { systemDocumentPair } from './system-files.ts';
import { decodeBase64Any, encodeBase64url } from '../../protocol/common/base64.ts';
import { canonicalString, CanonicalError } from '../../protocol/common/canonical.ts';
import { verifyEd25519Async } from '../../protocol/common/ed25519.ts';
import { parseKey } from '../../protocol/common/keys.ts';
import { parseRfc3339 } from '../../protocol/common/time.ts';
import { checkSessionProof } from '../../protocol/signin/session-proof.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { HttpError, ruleError, type Code } from '../shared/errors.ts';
import type { RelayContext } from './config.ts';
import { lookup, relayBase, type Known, type DirectoryContext } from './directory.ts';
import { relaySeams } from './seams.ts';
import { asObject, parseJson } from '../shared/json.ts';

/** What this module uses of the relay's context. */
export type MessagesContext = Pick<RelayContext, 'auth' | 'config' | 'events' | 'log' | 'now' | 'rate' | 'store'> & DirectoryContext;

type Kind = 'message' | 'ack';
const AUTH_REQUEST = vocabulary.message_types.auth_request;
const REQUIRED: Record<Kind, readonly string[]> = {
  message: ['id', 'sender', 'recipient', 'timestamp', 'payload', 'signature'],
  ack: ['type', 'id', 'message_id', 'state', 'sender', 'recipient', 'timestamp', 'signature'],
};
const B64URL = /^[A-Za-z0-9_-]*={0,2}$/;

export function parseEnvelope(kind: Kind, bytes: Uint8Array): Record<string, unknown> {
  const parsed = parseJson(bytes);
  if (!parsed.ok) throw ruleError(400, 'ra.errors.invalid-request', 'the body is not JSON');
  const e = asObject(parsed.value);
  if (!e) throw ruleError(400, 'ra.errors.invalid-request', 'the body is not a JSON object');
  const fieldsRule = kind === 'message' ? 'ra.messages.fields' : 'ra.acks.state';
  for (const f of REQUIRED[kind]) {
    if (typeof e[f] !== 'string' || e[f] === '') throw new HttpError(400, 'invalid_request', `${f} is required (a non-empty string)`, fieldsRule);
  }
  if (parseRfc3339(e.timestamp) === undefined) throw new HttpError(400, 'invalid_request', 'timestamp is not RFC 3339', fieldsRule);
  if (kind === 'message') {
    if (!B64URL.test(e.payload as string)) throw new HttpError(400, 'invalid_request', 'payload is not base64url', 'ra.messages.fields');
    const enc = e.encryption as Record<string, unknown> | undefined;
    if (enc === null || typeof enc !== 'object' || Array.isArray(enc) || ['alg', 'ephemeral_public_key', 'nonce'].some((k) => typeof enc[k] !== 'string' || enc[k] === '')) {
      throw ruleError(400, 'ra.messages.encryption-required', 'encryption.alg, encryption.ephemeral_public_key and encryption.nonce are required');
    }
  } else {
    if (e.type !== 'ack') throw new HttpError(400, 'invalid_request', 'type must be "ack"', 'ra.acks.state');
    if (e.state !== 'delivered_client') throw new HttpError(400, 'invalid_request', 'state must be delivered_client (the only state of v1)', 'ra.acks.state');
  }
  return e;
}

/** Verifies the envelope's signature by the sender's key, its registered session, or its session proof. */
async function verifySignature(ctx: MessagesContext, kind: Kind, e: Record<string, unknown>, sender: Known): Promise<void> {
  const sig = decodeBase64Any(String(e.signature));
  let message: string;
  try {
    const { signature: _s, ...unsigned } = e;
    void _s;
    message = canonicalString(ctx.config.profile, kind, unsigned);
  } catch (error) {
    throw ruleError(400, 'ra.errors.invalid-request', `the signed lines cannot be built: ${error instanceof CanonicalError ? error.field : (error as Error).message}`);
  }
  let keys: Uint8Array[] = sender.keys;
  if (e.session_proof !== undefined) {
    // When the proof is judged, and whether a revoked session is refused, are seams (seams.ts).
    const seams = relaySeams(ctx.config);
    const proof = checkSessionProof(ctx.config.profile, sender.identity, e.session_proof, seams.proofTime(e.session_proof, ctx.now()), () => sender.keys);
    if (!proof.ok) throw ruleError(401, 'ra.errors.signature-invalid', `the session proof does not hold: ${proof.detail}`);
    if (seams.revoked(await ctx.store.isRevoked(encodeBase64url(proof.sessionKey), ctx.now()))) throw ruleError(401, 'ra.sessions.revoked-stays-revoked', 'this session was revoked');
    keys = [proof.sessionKey];
  } else if (typeof e.session_id === 'string') {
    const s = await ctx.auth.session(e.session_id);
    if (!s || s.identity !== sender.identity) throw ruleError(401, 'ra.messages.session-expired', 'the session is unknown or expired: register a new session and retry');
    keys = [s.key];
  }
  let ok = false;
  if (sig && sig.length === 64) for (const k of keys) if (await verifyEd25519Async(k, message, sig)) ok = true;
  if (!ok) throw ruleError(401, 'ra.errors.signature-invalid', 'the signature does not verify');
}

/** Accepts one envelope: its status is 202 or the HttpError thrown. */
export async function acceptEnvelope(ctx: MessagesContext, kind: Kind, bytes: Uint8Array): Promise<{ id: string }> {
  if (bytes.length > limits.message_body_max_bytes) throw ruleError(413, 'ra.errors.payload-too-large', `the body is larger than ${limits.message_body_max_bytes} bytes (ra.messages.body-cap)`);
  const seams = relaySeams(ctx.config);
  const e = seams.envelope(parseEnvelope(kind, bytes));
  if (kind === 'message' && e.type === AUTH_REQUEST && !ctx.config.documentOnly) promptExpiry(ctx, e.expires_at);
  const [sender, recipient] = await Promise.all([lookup(ctx, e.sender), lookup(ctx, e.recipient)]);
  if (!sender?.local && !seams.holdsInbox(recipient)) throw ruleError(403, 'ra.relay.locality', 'neither the sender nor the recipient is local to this relay');
  const charging = ctx.rate.charge([
    ['sender', String(e.sender).toLowerCase()],
    ['global', '*'],
  ]);
  if (charging) await charging;
  if (!sender) throw ruleError(401, 'ra.errors.signature-invalid', `the sender ${String(e.sender)} cannot be resolved, so its signature cannot be checked`);
  const id = e.id as string;
  // A sign-in prompt is held no longer than its own expiry: past it, pickup never shows it (ra.inbox.auth-request-expiry).
  const spoolUntil = ctx.now() + ctx.config.spoolTtlSeconds * 1000;
  const expiresAt = kind === 'message' && e.type === AUTH_REQUEST ? Math.min(spoolUntil, parseRfc3339(e.expires_at) ?? spoolUntil) : spoolUntil;
  const store = async (): Promise<boolean> => {
    // A dropped sign-in prompt is answered 202 like a stored one (ra.inbox.auth-request).
    if (kind === 'message' && recipient?.local && (await admit(ctx, recipient.identity, sender.identity, e.type)) === 'drop') return true;
    if (seams.holdsInbox(recipient)) {
      const outcome = seams.spooled(
        await ctx.store.spool({
          recipient: (recipient?.identity ?? String(e.recipient)).toLowerCase(),
          kind,
          id,
          sender: sender.identity,
          message_id: kind === 'ack' ? (e.message_id as string) : null,
          // The bytes as received: what was signed is what is returned, never re-serialized.
          body: Buffer.from(bytes).toString('utf8'),
          expires_at: expiresAt,
        }),
      );
      if (outcome === 'conflict') throw ruleError(409, 'ra.messages.id-key', `another envelope with id ${id} is waiting for ${String(e.recipient)}`);
      if (outcome === 'stored' && kind === 'message' && expiresAt > ctx.now()) ctx.events.message(recipient?.identity ?? String(e.recipient), id);
      return true;
    }
    return false;
  };
  const verify = async (): Promise<void> => {
    if (seams.signed(kind)) await verifySignature(ctx, kind, e, sender);
  };
  if (await seams.accept(verify, store)) return { id };
  // Only the sender is local: forward as signed to the recipient's relay (ra.relay.forward).
  if (!recipient?.relay) throw ruleError(403, 'ra.relay.locality', `the recipient ${String(e.recipient)} names no relay to forward to`);
  await forward(ctx, kind, recipient.relay, bytes);
  return { id };
}

/**
 * The recipient's inbox policy (ra.inbox.policy): a blocked sender is refused, and under
 * `contacts_only` so is anyone not an accepted contact. A sign-in prompt is kept only from a
 * service the recipient trusts, whatever the mode, and otherwise dropped (ra.inbox.auth-request).
 */
async function admit(ctx: MessagesContext, recipient: string, sender: string, type: unknown): Promise<'store' | 'drop'> {
  const [contactsDoc, policy] = await systemDocumentPair(ctx, recipient, ['relay/contacts.json', 'relay/inbox-policy.json']);
  const contacts = contactsDoc?.contacts;
  const entry = Array.isArray(contacts) ? (contacts as Array<{ identity?: unknown; state?: unknown }>).find((c) => typeof c.identity === 'string' && c.identity.toLowerCase() === sender) : undefined;
  if (entry?.state === 'blocked') throw ruleError(403, 'ra.inbox.policy', 'the recipient does not take mail from this sender');
  if (type === AUTH_REQUEST) {
    const trusted = Array.isArray(policy?.trusted_auth_services) && policy.trusted_auth_services.some((s) => typeof s === 'string' && s.toLowerCase() === sender);
    // The document-only variant refuses an untrusted prompt openly (document 2 says only that it is dropped).
    if (!trusted && ctx.config.documentOnly) throw new HttpError(403, 'not_authorized', 'the recipient does not trust this sender for sign-in prompts', 'ra.inbox.auth-request');
    return relaySeams(ctx.config).promptKept(trusted) ? 'store' : 'drop';
  }
  if (policy?.mode === 'contacts_only' && entry?.state !== 'accepted') throw ruleError(403, 'ra.inbox.policy', 'the recipient takes mail from its contacts only');
  return 'store';
}

/** A sign-in prompt's signed expiry: in the future, and near (ra.inbox.auth-request-expiry). */
function promptExpiry(ctx: MessagesContext, expiresAt: unknown): void {
  const at = parseRfc3339(expiresAt);
  const now = ctx.now();
  if (at === undefined) throw ruleError(400, 'ra.inbox.auth-request-expiry', `a ${AUTH_REQUEST} needs expires_at (RFC 3339)`);
  if (at <= now) throw ruleError(400, 'ra.inbox.auth-request-expiry', `this ${AUTH_REQUEST} expired at ${String(expiresAt)}`);
  if (at > now + limits.auth_request_ttl_max_seconds * 1000)
    throw ruleError(400, 'ra.inbox.auth-request-expiry', `a ${AUTH_REQUEST} may expire at most ${limits.auth_request_ttl_max_seconds} s ahead`);
}

async function forward(ctx: MessagesContext, kind: Kind, relay: string, bytes: Uint8Array): Promise<void> {
  const url = `${relayBase(relay)}/${kind === 'message' ? 'messages' : 'acks'}`;
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: Buffer.from(bytes), signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    ctx.log(`forwarding to ${url} failed: ${(error as Error).message}`);
    throw ruleError(502, 'ra.errors.relay-unreachable', `the recipient's relay ${relay} cannot be reached`);
  }
  const text = await res.text();
  if (res.status !== 202) {
    if (res.status < 400 || res.status >= 500) throw ruleError(502, 'ra.errors.relay-unreachable', `the recipient's relay ${relay} answered ${res.status}`);
    let code: unknown;
    try {
      code = (JSON.parse(text) as { error?: unknown }).error;
    } catch {
      // no envelope
    }
    // Its refusal, passed on (ra.errors.relay-unreachable): its status and, when it sent one, its code.
    throw new HttpError(
      res.status,
      (typeof code === 'string' && /^[a-z][a-z0-9_]*$/.test(code) ? code : 'relay_unreachable') as Code,
      `the recipient's relay ${relay} refused it (${res.status})`,
      'ra.errors.relay-unreachable',
    );
  }
}

export { parseKey };
