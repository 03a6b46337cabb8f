// Pairing v2 (document 3, Pairing: commit, then reveal). A new device offers a commitment; the
// approver fetches it with its nonce; the new device reveals its key, which must open the
// commitment; the approver delivers the sealed seed; the new device takes it once. The relay
// computes no digits and never reads the seed. Offers live in memory (ra.pairing.limits), the
// claim token only as its SHA-256.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { decodeBase64Any } from '../../protocol/common/base64.ts';
import { pairingCommitment } from '../../protocol/common/canonical.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { normalizeShortCode, shortCodeFrom } from '../../protocol/signin/reference.ts';
import { limits } from '../../schemas/ts/limits.ts';
import type { RuleId } from '../../schemas/ts/rules.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import type { RelayContext } from './config.ts';
import { lookup, type Known } from './directory.ts';
import { object } from './identities.ts';

type State = 'offered' | 'nonce' | 'revealed' | 'delivered';

interface Offer {
  identity: string;
  code: string;
  tokenHash: Buffer;
  commitment: string;
  label: string;
  expiresAt: number;
  state: State;
  approverNonce?: string;
  mode?: string;
  ephemeralPublicKey?: string;
  commitNonce?: string;
  sealed?: string;
}

const MODES = new Set(['scan', 'compare']);
const bad = (detail: string, rule: RuleId = 'ra.pairing.limits') => new HttpError(400, 'invalid_request', detail, rule);
const gone = () => ruleError(404, 'ra.errors.not-found', 'no live pairing offer with this code');
const outOfOrder = (detail: string) => ruleError(409, 'ra.pairing.out-of-order', detail);
const hash = (token: string) => createHash('sha256').update(token).digest();

/** A base64url value of 32 bytes, or 400. */
function key32(v: unknown, name: string): string {
  const bytes = typeof v === 'string' ? decodeBase64Any(v) : undefined;
  if (!bytes || bytes.length !== 32) throw bad(`${name} is base64url of 32 bytes`);
  return v as string;
}

/** The live offers of this relay, by rendezvous code. */
export class Pairings {
  readonly #offers = new Map<string, Offer>();

  constructor(
    readonly now: () => number,
    /** The `pairing-forever` breakage: offers never expire (ra.pairing.expiry). */
    readonly keepForever = false,
  ) {}

  #sweep(): void {
    if (this.keepForever) return;
    for (const [code, o] of this.#offers) if (o.expiresAt <= this.now()) this.#offers.delete(code);
  }

  live(identity: string): number {
    this.#sweep();
    return [...this.#offers.values()].filter((o) => o.identity === identity).length;
  }

  add(offer: Omit<Offer, 'code'>): string {
    let code: string;
    do code = shortCodeFrom(new Uint8Array(randomBytes(limits.rendezvous_code_length)));
    while (this.#offers.has(code));
    this.#offers.set(code, { ...offer, code });
    return code;
  }

  /** The live offer of `identity` under a code typed loosely (ra.pairing.short-code), or 404. */
  get(identity: string, typed: string): Offer {
    this.#sweep();
    const code = normalizeShortCode(typed);
    const o = code === undefined ? undefined : this.#offers.get(code);
    if (!o || o.identity !== identity) throw gone();
    return o;
  }

  remove(code: string): void {
    this.#offers.delete(code);
  }
}

async function hosted(ctx: RelayContext, raw: string): Promise<Known> {
  const known = await lookup(ctx, raw);
  if (!known?.local) throw ruleError(404, 'ra.errors.not-found', `${raw} is not hosted here`);
  return known;
}

/** The offer whose claim token the request bears (ra.pairing.bearer), or 401. */
function borne(ctx: RelayContext, identity: string, typed: string, req: Request): Offer {
  const o = ctx.pairings.get(identity, typed);
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.get('authorization') ?? '');
  if (!m || !timingSafeEqual(hash(m[1]!), o.tokenHash)) throw new HttpError(401, 'not_authorized', "this call needs the offer's claim token (Authorization: Bearer)", 'ra.errors.pairing-unauthorized');
  return o;
}

/** POST /identities/:identity/enroll/offer (ra.pairing.offer, v1-refused, offers-max). */
export async function offer(ctx: RelayContext, raw: string, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const known = await hosted(ctx, raw);
  const b = object(bytes);
  if (b.commitment === undefined && b.ephemeral_public_key !== undefined) throw ruleError(400, 'ra.pairing.v1-refused', 'pairing v1 (a key without a commitment) is not offered: commit, then reveal');
  const commitment = key32(b.commitment, 'commitment');
  const label = b.label ?? '';
  if (typeof label !== 'string' || Buffer.byteLength(label) > limits.pairing_label_max_bytes) throw bad(`label is a string of at most ${limits.pairing_label_max_bytes} bytes`);
  if (ctx.pairings.live(known.identity) >= limits.pairing_offers_max) throw ruleError(429, 'ra.pairing.offers-max', `${known.identity} has ${limits.pairing_offers_max} live offers`);
  const token = randomBytes(32).toString('base64url');
  const expiresAt = ctx.now() + (ctx.config.pairingTtlSeconds ?? limits.pairing_offer_ttl_seconds) * 1000;
  const code = ctx.pairings.add({ identity: known.identity, tokenHash: hash(token), commitment, label, expiresAt, state: 'offered' });
  return { rendezvous_id: code, claim_token: token, expires_at: formatRfc3339(expiresAt) };
}

/** POST .../enroll/:rendezvous/fetch (ra.pairing.fetch, already-approving, ra.signing.enroll-fetch). */
export async function fetchOffer(ctx: RelayContext, raw: string, typed: string, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const known = await hosted(ctx, raw);
  const o = ctx.pairings.get(known.identity, typed);
  const b = object(bytes);
  await ctx.auth.admin('enroll-fetch', { identity: known.identity, rendezvous_id: o.code }, b, known.keys);
  const nonce = key32(b.approver_nonce, 'approver_nonce');
  if (typeof b.mode !== 'string' || !MODES.has(b.mode)) throw bad('mode is scan or compare', 'ra.pairing.fetch');
  if (o.approverNonce !== undefined && o.approverNonce !== nonce) throw ruleError(409, 'ra.pairing.already-approving', 'another approver holds this offer');
  if (o.state === 'offered') Object.assign(o, { state: 'nonce', approverNonce: nonce, mode: b.mode });
  return {
    state: o.state,
    commitment: o.commitment,
    label: o.label,
    expires_at: formatRfc3339(o.expiresAt),
    ...(o.ephemeralPublicKey !== undefined ? { ephemeral_public_key: o.ephemeralPublicKey, commit_nonce: o.commitNonce } : {}),
  };
}

/** POST .../enroll/:rendezvous/reveal (ra.pairing.reveal, ra.pairing.commitment, out-of-order). */
export function reveal(ctx: RelayContext, identity: string, typed: string, req: Request, bytes: Uint8Array): Record<string, unknown> {
  const o = borne(ctx, identity, typed, req);
  const b = object(bytes);
  const ephemeral_public_key = key32(b.ephemeral_public_key, 'ephemeral_public_key');
  const commit_nonce = key32(b.commit_nonce, 'commit_nonce');
  if (o.state !== 'nonce') throw outOfOrder(o.state === 'offered' ? 'no approver has fetched this offer yet' : 'this offer was already revealed');
  if (pairingCommitment(ctx.config.profile, { ephemeral_public_key, commit_nonce }) !== o.commitment) throw bad('the key and commit_nonce do not open the commitment', 'ra.pairing.commitment');
  Object.assign(o, { state: 'revealed', ephemeralPublicKey: ephemeral_public_key, commitNonce: commit_nonce });
  return { state: o.state };
}

/** POST .../enroll/:rendezvous/deliver (ra.pairing.deliver, out-of-order, ra.signing.enroll-deliver). */
export async function deliver(ctx: RelayContext, raw: string, typed: string, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const known = await hosted(ctx, raw);
  const o = ctx.pairings.get(known.identity, typed);
  const b = object(bytes);
  await ctx.auth.admin('enroll-deliver', { identity: known.identity, rendezvous_id: o.code }, b, known.keys);
  if (typeof b.sealed !== 'string' || b.sealed === '' || Buffer.byteLength(b.sealed) > limits.pairing_sealed_max_bytes)
    throw bad(`sealed is a string of at most ${limits.pairing_sealed_max_bytes} bytes`);
  if (o.state !== 'revealed') throw outOfOrder(o.state === 'delivered' ? 'this offer was already delivered' : 'the new device has not revealed its key yet');
  Object.assign(o, { state: 'delivered', sealed: b.sealed });
  return { state: o.state };
}

/** GET .../enroll/:rendezvous (ra.pairing.poll): the sealed seed once, then the offer is gone. */
export function poll(ctx: RelayContext, identity: string, typed: string, req: Request): Record<string, unknown> {
  const o = borne(ctx, identity, typed, req);
  if (o.state !== 'delivered') return { state: o.state, ...(o.approverNonce !== undefined ? { approver_nonce: o.approverNonce, mode: o.mode } : {}) };
  ctx.pairings.remove(o.code);
  return { state: 'delivered', sealed: o.sealed, ready: true };
}

/** DELETE .../enroll/:rendezvous (ra.pairing.abandon). */
export function abandon(ctx: RelayContext, identity: string, typed: string, req: Request): void {
  ctx.pairings.remove(borne(ctx, identity, typed, req).code);
}
