// The relay's live pairing offers (pairing.ts answers the routes; the context holds one of these):
// kept in the relay's state, so every process sees each offer and each step takes it once.
import { normalizeShortCode } from '../../protocol/signin/reference.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { ruleError } from '../shared/errors.ts';
import type { Offer, RelayState } from './state.ts';

const gone = () => ruleError(404, 'ra.errors.not-found', 'no live pairing offer with this code');

/** The live offers of this relay, by rendezvous code. */
export class Pairings {
  constructor(
    readonly state: RelayState,
    readonly now: () => number,
    /** The `pairing-forever` breakage: offers never expire (ra.pairing.expiry). */
    readonly keepForever = false,
  ) {}

  /** A new offer's code, or 429 when the identity has its maximum live (ra.pairing.offers-max). */
  async add(offer: Omit<Offer, 'code'>): Promise<string> {
    const code = await this.state.addOffer(offer, limits.pairing_offers_max, this.keepForever);
    if (code === undefined) throw ruleError(429, 'ra.pairing.offers-max', `${offer.identity} has ${limits.pairing_offers_max} live offers`);
    return code;
  }

  /** The live offer of `identity` under a code typed loosely (ra.pairing.short-code), or 404. */
  async get(identity: string, typed: string): Promise<Offer> {
    const code = normalizeShortCode(typed);
    const o = code === undefined ? undefined : await this.state.offer(code);
    if (!o || o.identity !== identity || (!this.keepForever && o.expiresAt <= this.now())) throw gone();
    return o;
  }

  /**
   * One step of an offer's state machine: `step` judges the offer as stored (throwing refuses the
   * step) and answers what replaces it (null removes it); it is taken only if nobody changed the
   * offer meanwhile, and judged again on the new offer otherwise. The offer the step was taken on.
   */
  async step(identity: string, typed: string, step: (o: Offer) => Offer | null): Promise<{ before: Offer; after: Offer | null }> {
    for (;;) {
      const before = await this.get(identity, typed);
      const after = step(before);
      if (after === before || (await this.state.swapOffer(before, after))) return { before, after };
    }
  }
}
