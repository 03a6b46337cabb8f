// The relay suite's view of its target and one check's conversation with it. The target is a relay
// (and, for federation, a peer relay) given by URL; everything else is learned from what they
// publish (the banner's `relay_address` and `hosted_domains`) or declared by the target (spool
// lifetime, stream cap, invite code). Test identities live in the test authority: one whose
// document names a relay is homed there (ra.relay.dns-locality), and where the relay hosts a
// domain the identity is also registered there as a hosted identity (POST /identities).
import { randomBytes } from 'node:crypto';
import type { Profile } from '../../../protocol/common/profile.ts';
import { encodeBase64url } from '../../../protocol/common/base64.ts';
import type { AuthorityControl } from '../../actors/authority/types.ts';
import { HttpClient, type Exchange, type HttpClientOptions, type HttpResponse } from '../../actors/http.ts';
import { RelayClient, newRelayIdentity, type RelayIdentity } from '../../actors/relay/index.ts';
import { CheckFailure, CheckSkip } from '../../run/verdict.ts';
import { failOnServerError, isObject, refusedWith, safeJson, said, statusIn } from '../../run/answers.ts';
import { once } from '../../run/once.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import type { RuleId } from '../../../schemas/ts/rules.ts';

export { CheckFailure, CheckSkip, isObject, refusedWith, safeJson, said };

export interface RelayDeclared {
  /** SPOOL_TTL of the relay under test, seconds (the expiry check runs only when it is short). */
  spoolTtlS?: number;
  /** A challenge's life when the target declares one shorter than document 3's 60 s (a test contract). */
  challengeTtlS?: number;
  /** A pairing offer's life when the target declares one shorter than document 3's 10 minutes (a test contract). */
  pairingTtlS?: number;
  /** MAX_STREAMS_PER_IDENTITY (default the project's). */
  maxStreams?: number;
  /** Its per-sender bucket (default the project's). */
  senderLimit?: number;
  /** Availability lookups one IP address may make in a window (default the project's). */
  availabilityLimit?: number;
  /** An invite code it accepts, when it runs with REGISTRATION_GATE=invite. */
  inviteCode?: string;
  /** The peer registers hosted identities without an invite (REGISTRATION_GATE not invite). */
  peerOpenRegistration?: boolean;
  /** Its OAUTH_BRIDGE_URL, when set. */
  oauthBridgeUrl?: string;
}

/** A registration's invite field: the code the target declares, none at an open relay. */
export const inviteOf = (t: RelayTarget): { invite_code?: string } => (t.declared.inviteCode ? { invite_code: t.declared.inviteCode } : {});

export interface RelayTarget {
  profile: Profile;
  /** The relay under test, base URL. */
  url: string;
  /** A second relay for federation checks (optional). */
  peerUrl?: string;
  authority: AuthorityControl;
  requestTimeoutMs: number;
  declared: RelayDeclared;
  /** Restarts the relay under test (its spool kept): enables the durability checks. */
  restart?: () => Promise<void>;
  /**
   * A relay of the durability checks' own, of the same implementation and flags as `url`, which
   * they restart while the rest of the suite runs on (the reference starts one). Without it they
   * restart the relay under test, and so run alone.
   */
  restartable?: { url: string; restart: () => Promise<void> };
  /** What the relays publish, read once. */
  published?: () => Promise<Published>;
}

export interface RelayFacts {
  relayAddress: string;
  hostedDomains: string[];
  banner?: Record<string, unknown>;
}

export interface Published {
  relay: RelayFacts;
  peer?: RelayFacts;
}

/** A relay's banner (GET / as JSON): its address and hosted domains; the URL's host when it publishes none. */
export async function readFacts(url: string, timeoutMs: number): Promise<RelayFacts> {
  const http = new HttpClient({ timeoutMs });
  try {
    const r = await http.get(`${url}/`, { headers: { accept: 'application/json' } });
    // A banner is optional (the URL's host stands in), a 5xx is not: it must not turn into skips.
    failOnServerError(r, `the banner (GET ${url}/)`);
    const b = safeJson(r);
    const banner = isObject(b) ? b : undefined;
    const relayAddress = typeof banner?.relay_address === 'string' && banner.relay_address !== '' ? banner.relay_address : new URL(url).host;
    const hostedDomains = Array.isArray(banner?.hosted_domains) ? banner.hosted_domains.filter((d): d is string => typeof d === 'string') : [];
    return { relayAddress, hostedDomains, ...(banner ? { banner } : {}) };
  } finally {
    await http.close();
  }
}

/**
 * Where the checks that restart the relay run: on the target's own restartable relay, in a lane
 * of their own beside the rest of the suite; or on the relay under test, alone (exclusive).
 * Undefined when the target cannot be restarted.
 */
export function restartTarget(t: RelayTarget): { target: RelayTarget & { restart: () => Promise<void> }; placement: { lane: string } | { exclusive: true } } | undefined {
  if (t.restartable) {
    const { published: _published, ...rest } = t;
    return { target: { ...rest, url: t.restartable.url, restart: t.restartable.restart }, placement: { lane: 'relay/restartable' } };
  }
  return t.restart ? { target: { ...t, restart: t.restart }, placement: { exclusive: true } } : undefined;
}

/** The first domain the relay under test hosts, from its banner; skips the check when it hosts none. */
export async function hostedDomain(s: Session): Promise<string> {
  const d = (await s.facts()).relay.hostedDomains[0];
  if (!d) throw new CheckSkip('the relay publishes no hosted_domains in its banner: hosted registration is not checked');
  return d;
}

/** One check's conversation: HTTP clients to both relays, its identities, and every exchange as evidence. */
export class Session {
  readonly exchanges: Exchange[] = [];
  readonly notes: string[] = [];
  readonly #http: HttpClient;
  readonly relay: RelayClient;
  readonly #peer?: RelayClient;
  readonly #callers: HttpClient[] = [];

  constructor(
    readonly target: RelayTarget,
    readonly signal?: AbortSignal,
  ) {
    this.#http = this.#client();
    this.relay = new RelayClient(target.profile, target.url, this.#http, signal);
    if (target.peerUrl) this.#peer = new RelayClient(target.profile, target.peerUrl, this.#http, signal);
  }

  get profile(): Profile {
    return this.target.profile;
  }

  /** An HTTP client whose every exchange is this check's evidence. */
  #client(extra: HttpClientOptions = {}): HttpClient {
    return new HttpClient({ timeoutMs: this.target.requestTimeoutMs, evidenceBytes: 2048, keepExchanges: 0, maxBodyBytes: 8 * 1024 * 1024, onExchange: (e) => void this.exchanges.push(e), ...extra });
  }

  /** The relay under test as a caller of its own sees it: connections from `address` (a loopback address, 127/8), closed with the session. */
  from(address: string): RelayClient {
    const http = this.#client({ localAddress: address });
    this.#callers.push(http);
    return new RelayClient(this.target.profile, this.target.url, http, this.signal);
  }

  /** The peer relay; skips the check when the target has none. */
  get peer(): RelayClient {
    if (!this.#peer) throw new CheckSkip('no peer relay given (--relay-peer): federation is not checked');
    return this.#peer;
  }

  async facts(): Promise<Published> {
    return (this.target.published ??= once(async () => ({
      relay: await readFacts(this.target.url, this.target.requestTimeoutMs),
      ...(this.target.peerUrl ? { peer: await readFacts(this.target.peerUrl, this.target.requestTimeoutMs) } : {}),
    })))();
  }

  /**
   * A new identity homed at the relay under test (or the peer): published in the authority with
   * its document naming that relay, and registered there as a hosted identity when the relay hosts
   * a domain. `register: false` leaves it unregistered (to register it in the check itself).
   */
  async identity(where: 'relay' | 'peer' = 'relay', options: { register?: boolean } = {}): Promise<RelayIdentity> {
    const facts = (await this.facts())[where];
    if (!facts) throw new CheckSkip('no peer relay given (--relay-peer): federation is not checked');
    const domain = facts.hostedDomains[0];
    const label = `t${randomBytes(5).toString('hex')}`;
    const id = newRelayIdentity(domain ? `${label}.${domain}` : `${label}.id.test`);
    await this.publish(id, facts.relayAddress);
    if (domain && options.register !== false) {
      const client = where === 'relay' ? this.relay : this.peer;
      const r = await client.register(id, facts.relayAddress, inviteOf(this.target));
      if (r.status < 200 || r.status >= 300) throw new CheckFailure(`registering the test identity ${id.identity} at ${client.url} (POST /identities) answered ${said(r)}`);
    }
    return id;
  }
  /** A name beside `where`'s test identities that nothing resolves: an unregistered one's, a letter before it. */
  async unresolvable(where: 'relay' | 'peer' = 'relay'): Promise<string> {
    return `x${(await this.identity(where, { register: false })).identity}`;
  }

  /** An identity homed at no relay of the target (its document names an address nobody serves). */
  async stranger(): Promise<RelayIdentity> {
    const id = this.nobody();
    await this.publish(id, '127.0.0.1:9');
    return id;
  }

  /** An identity no directory knows: published nowhere. */
  nobody(): RelayIdentity {
    return newRelayIdentity(`t${randomBytes(5).toString('hex')}.id.test`);
  }

  async publish(id: RelayIdentity, relayAddress: string): Promise<void> {
    await this.target.authority.publish({ identity: id.identity, seed: id.seed, encryptionPublicKey: `x25519:${encodeBase64url(id.encryption.publicKey)}`, relay: relayAddress });
  }

  note(text: string): void {
    this.notes.push(text);
  }

  async close(): Promise<void> {
    await Promise.all([this.#http, ...this.#callers].map((h) => h.close().catch(() => undefined)));
  }

  evidence(): unknown {
    return { ...(this.notes.length > 0 ? { notes: this.notes } : {}), exchanges: this.exchanges.slice(-40) };
  }

  /** A pairing offer this check asked for more than the target's declared life ago, unless the check judges that expiry. */
  outlived(rules: readonly RuleId[]): string | undefined {
    if (rules.includes('ra.pairing.expiry')) return undefined;
    const life = this.target.declared.pairingTtlS ?? limits.pairing_offer_ttl_seconds;
    const first = this.relay.oldestOfferAskedAt();
    if (first === undefined) return undefined;
    const age = (Date.now() - first) / 1000;
    if (age <= life) return undefined;
    return `the check kept using pairing offers ${age.toFixed(1)} s after asking for the first, past the ${life} s life the target declares (--relay-pairing-ttl): its refusals may be that expiry, on a machine too slow for so short a life`;
  }
}

export const accepted = (r: HttpResponse): boolean => statusIn(r, 200, 300);
export const refused = (r: HttpResponse): boolean => statusIn(r, 400, 500);

/** The pickup body's `messages` and `acks` arrays, or a problem text. */
export function pickupOf(r: HttpResponse): { messages: Record<string, unknown>[]; acks: Record<string, unknown>[]; body: Record<string, unknown> } | string {
  if (r.status !== 200) return `the pickup answered ${said(r)}`;
  const b = safeJson(r);
  if (!isObject(b) || !Array.isArray(b.messages) || !Array.isArray(b.acks)) return `the pickup answer has no "messages" and "acks" arrays: ${said(r)}`;
  return { messages: b.messages.filter(isObject), acks: b.acks.filter(isObject), body: b };
}

/** The error code of a JSON answer (what document 3's envelope calls `error`). */
export function codeOf(r: HttpResponse): string | undefined {
  const b = safeJson(r);
  return isObject(b) && typeof b.error === 'string' ? b.error : undefined;
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
