// Pairing v2 (document 3, Pairing: commit, then reveal). A new device offers a commitment; the
// approver fetches it with its nonce; the new device reveals its key, which must open the
// commitment; the approver delivers the sealed seed; the new device takes it once. The relay
// computes no digits and never reads the seed. Offers live in the relay's in-memory state
// (ra.pairing.limits; state.ts: shared by the relay's processes with --shared-state), the claim
// token only as its SHA-256; each step is a compare-and-set on the offer as read, so concurrent
// steps on any processes take it once.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { decodeBase64Any } from '../../protocol/common/base64.ts';
import { pairingCommitment } from '../../protocol/common/canonical.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { limits } from '../../schemas/ts/limits.ts';
import type { RuleId } from '../../schemas/ts/rules.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import type { RelayContext } from './config.ts';
import { lookup, type Known, type DirectoryContext } from './directory.ts';
import { object } from './identities.ts';
import type { Offer } from './state.ts';

/** What this module uses of the relay's context. */
export type PairingContext = Pick<RelayContext, 'auth' | 'config' | 'now' | 'pairings'> & DirectoryContext;

export { Pairings } from './pairings.ts';

const MODES = new Set(['scan', 'compare']);
const bad = (detail: string, rule: RuleId = 'ra.pairing.limits') => new HttpError(400, 'invalid_request', detail, rule);
const outOfOrder = (detail: string) => ruleError(409, 'ra.pairing.out-of-order', detail);
const hash = (token: string) => createHash('sha256').update(token).digest('hex');

/** A base64url value of 32 bytes, or 400. */
function key32(v: unknown, name: string): string {
  const bytes = typeof v === 'string' ? decodeBase64Any(v) : undefined;
  if (!bytes || bytes.length !== 32) throw bad(`${name} is base64url of 32 bytes`);
  return v as string;
}

async function hosted(ctx: PairingContext, raw: string): Promise<Known> {
  const known = await lookup(ctx, raw);
  if (!known?.local) throw ruleError(404, 'ra.errors.not-found', `${raw} is not hosted here`);
  return known;
}

/** Whether the request bears the offer's claim token (ra.pairing.bearer); 401 otherwise. */
function bears(o: Offer, req: Request): void {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.get('authorization') ?? '');
  if (!m || !timingSafeEqual(Buffer.from(hash(m[1]!), 'hex'), Buffer.from(o.tokenHash, 'hex')))
    throw new HttpError(401, 'not_authorized', "this call needs the offer's claim token (Authorization: Bearer)", 'ra.errors.pairing-unauthorized');
}

/** POST /identities/:identity/enroll/offer (ra.pairing.offer, v1-refused, offers-max). */
export async function offer(ctx: PairingContext, raw: string, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const known = await hosted(ctx, raw);
  const b = object(bytes);
  if (b.commitment === undefined && b.ephemeral_public_key !== undefined) throw ruleError(400, 'ra.pairing.v1-refused', 'pairing v1 (a key without a commitment) is not offered: commit, then reveal');
  const commitment = key32(b.commitment, 'commitment');
  const label = b.label ?? '';
  if (typeof label !== 'string' || Buffer.byteLength(label) > limits.pairing_label_max_bytes) throw bad(`label is a string of at most ${limits.pairing_label_max_bytes} bytes`);
  const token = randomBytes(32).toString('base64url');
  const expiresAt = ctx.now() + (ctx.config.pairingTtlSeconds ?? limits.pairing_offer_ttl_seconds) * 1000;
  const code = await ctx.pairings.add({ identity: known.identity, tokenHash: hash(token), commitment, label, expiresAt, state: 'offered' });
  return { rendezvous_id: code, claim_token: token, expires_at: formatRfc3339(expiresAt) };
}

/** POST .../enroll/:rendezvous/fetch (ra.pairing.fetch, already-approving, ra.signing.enroll-fetch). */
export async function fetchOffer(ctx: PairingContext, raw: string, typed: string, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const known = await hosted(ctx, raw);
  const { code } = await ctx.pairings.get(known.identity, typed);
  const b = object(bytes);
  await ctx.auth.admin('enroll-fetch', { identity: known.identity, rendezvous_id: code }, b, known.keys);
  const nonce = key32(b.approver_nonce, 'approver_nonce');
  const mode = b.mode;
  if (typeof mode !== 'string' || !MODES.has(mode)) throw bad('mode is scan or compare', 'ra.pairing.fetch');
  const { after } = await ctx.pairings.step(known.identity, typed, (o) => {
    if (o.approverNonce !== undefined && o.approverNonce !== nonce) throw ruleError(409, 'ra.pairing.already-approving', 'another approver holds this offer');
    return o.state === 'offered' ? { ...o, state: 'nonce', approverNonce: nonce, mode } : o;
  });
  const o = after!;
  return {
    rendezvous_id: code,
    state: o.state,
    commitment: o.commitment,
    label: o.label,
    expires_at: formatRfc3339(o.expiresAt),
    ...(o.ephemeralPublicKey !== undefined ? { ephemeral_public_key: o.ephemeralPublicKey, commit_nonce: o.commitNonce } : {}),
  };
}

/** POST .../enroll/:rendezvous/reveal (ra.pairing.reveal, ra.pairing.commitment, out-of-order). */
export async function reveal(ctx: PairingContext, identity: string, typed: string, req: Request, bytes: Uint8Array): Promise<Record<string, unknown>> {
  bears(await ctx.pairings.get(identity, typed), req);
  const b = object(bytes);
  const ephemeral_public_key = key32(b.ephemeral_public_key, 'ephemeral_public_key');
  const commit_nonce = key32(b.commit_nonce, 'commit_nonce');
  const { after } = await ctx.pairings.step(identity, typed, (o) => {
    if (o.state !== 'nonce') throw outOfOrder(o.state === 'offered' ? 'no approver has fetched this offer yet' : 'this offer was already revealed');
    if (pairingCommitment(ctx.config.profile, { ephemeral_public_key, commit_nonce }) !== o.commitment) throw bad('the key and commit_nonce do not open the commitment', 'ra.pairing.commitment');
    return { ...o, state: 'revealed', ephemeralPublicKey: ephemeral_public_key, commitNonce: commit_nonce };
  });
  return { state: after!.state };
}

/** POST .../enroll/:rendezvous/deliver (ra.pairing.deliver, out-of-order, ra.signing.enroll-deliver). */
export async function deliver(ctx: PairingContext, raw: string, typed: string, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const known = await hosted(ctx, raw);
  const { code } = await ctx.pairings.get(known.identity, typed);
  const b = object(bytes);
  await ctx.auth.admin('enroll-deliver', { identity: known.identity, rendezvous_id: code }, b, known.keys);
  const sealed = b.sealed;
  if (typeof sealed !== 'string' || sealed === '' || Buffer.byteLength(sealed) > limits.pairing_sealed_max_bytes) throw bad(`sealed is a string of at most ${limits.pairing_sealed_max_bytes} bytes`);
  const { after } = await ctx.pairings.step(known.identity, typed, (o) => {
    if (o.state !== 'revealed') throw outOfOrder(o.state === 'delivered' ? 'this offer was already delivered' : 'the new device has not revealed its key yet');
    return { ...o, state: 'delivered', sealed };
  });
  return { state: after!.state };
}

/** GET .../enroll/:rendezvous (ra.pairing.poll): the sealed seed once, then the offer is gone. */
export async function poll(ctx: PairingContext, identity: string, typed: string, req: Request): Promise<Record<string, unknown>> {
  bears(await ctx.pairings.get(identity, typed), req);
  const { before: o } = await ctx.pairings.step(identity, typed, (o) => (o.state === 'delivered' ? null : o));
  if (o.state !== 'delivered') return { state: o.state, ...(o.approverNonce !== undefined ? { approver_nonce: o.approverNonce, mode: o.mode } : {}) };
  return { state: 'delivered', sealed: o.sealed, ready: true };
}

/** DELETE .../enroll/:rendezvous (ra.pairing.abandon). */
export async function abandon(ctx: PairingContext, identity: string, typed: string, req: Request): Promise<void> {
  bears(await ctx.pairings.get(identity, typed), req);
  await ctx.pairings.step(identity, typed, () => null);
}
