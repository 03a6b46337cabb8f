// The authority's records and what it answers from them: the identities it publishes, their
// faults, the DNS answers and the signed identity documents. index.ts puts servers in front.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as dnsPacket from 'dns-packet';
import { vocabulary } from '../../../schemas/ts/vocabulary.ts';
import type { Profile } from '../../../protocol/common/profile.ts';
import { decodeBase64Any, encodeBase64url } from '../../../protocol/common/base64.ts';
import { formatKey, parseKey } from '../../../protocol/common/keys.ts';
import { publicKeyFromSeed } from '../../../protocol/common/ed25519.ts';
import { signDocument } from '../../../protocol/common/document.ts';
import { validServiceName } from '../../../protocol/common/names.ts';
import { formatRfc3339, parseRfc3339 } from '../../../protocol/common/time.ts';
import type { DnsAnswer } from './dns.ts';
import { HostedFiles } from './files.ts';
import {
  AuthorityError,
  type AuthorityControl,
  type FaultSpec,
  type FileSpec,
  type HostedFile,
  type IdentityInfo,
  type KeyInput,
  type NewIdentityOptions,
  type PublishSpec,
  type RotateOptions,
} from './types.ts';

interface Published {
  identity: string;
  seed?: Uint8Array;
  publicKey: Uint8Array;
  encryptionPublicKey?: Uint8Array;
  previousKeys: { publicKey: Uint8Array; validUntil: string }[];
  dns: boolean;
  https: boolean;
  relay: string;
  cacheControl: string;
  profile?: Record<string, unknown>;
  capabilities?: Record<string, unknown>;
  updatedAt: string;
  faults: FaultSpec & { dnsKeyBytes?: Uint8Array };
}

const OVERSIZE_DEFAULT = 262_144;

export function toSeed(input: KeyInput, what = 'seed'): Uint8Array {
  const bytes = typeof input === 'string' ? decodeBase64Any(input.trim()) : input;
  if (bytes?.length !== 32) throw new AuthorityError(`${what} must be 32 bytes (base64url)`);
  return bytes;
}

export function toPublicKey(input: KeyInput, kind: 'signing' | 'encryption' = 'signing'): Uint8Array {
  const bytes = typeof input === 'string' ? parseKey(input, kind) : input;
  if (bytes?.length !== 32) throw new AuthorityError(`${kind === 'signing' ? 'public key' : 'encryption key'} must be 32 bytes (${kind === 'signing' ? 'ed25519' : 'x25519'}:<b64url>)`);
  return bytes;
}

/** A string with the `ed25519:` prefix is a public key; any other string, and bytes, a seed. */
function seedOrKey(input: KeyInput): { seed?: Uint8Array; publicKey: Uint8Array } {
  if (typeof input === 'string' && input.trim().startsWith(vocabulary.key_prefixes.signing)) return { publicKey: toPublicKey(input) };
  const seed = toSeed(input);
  return { seed, publicKey: publicKeyFromSeed(seed) };
}

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** The published identities and hosted files, answered over DNS and HTTPS (faults included). */
export class Records implements Omit<AuthorityControl, 'info'> {
  readonly identities = new Map<string, Published>();
  readonly hosted = new HostedFiles((host) => this.identities.has(host));
  /** Responses held open by a timeout or delay fault, destroyed on clearFaults and close. */
  readonly held = new Set<ServerResponse>();
  readonly ids: Profile['ids'];
  readonly txtLabel: string;
  readonly encLabel: string;
  /** Set once the HTTPS server listens. */
  httpsPort = 443;
  /** Server names answered with their own address (a server under test on https, index.ts serverName). */
  readonly servers = new Map<string, string>();

  constructor(
    readonly profile: Profile,
    readonly address: string,
    readonly otherAddress: string,
    readonly ttl: number,
    readonly zone: string,
  ) {
    this.ids = profile.ids;
    this.txtLabel = `${this.ids.dns_txt_label}.`;
    this.encLabel = `${this.ids.dns_enc_label}.`;
  }

  answerDns(q: dnsPacket.Question): DnsAnswer {
    const name = q.name.toLowerCase().replace(/\.$/, '');
    let kind: 'a' | 'txt' | 'enc';
    let id: string;
    if (name.startsWith(this.txtLabel)) [kind, id] = ['txt', name.slice(this.txtLabel.length)];
    else if (name.startsWith(this.encLabel)) [kind, id] = ['enc', name.slice(this.encLabel.length)];
    else [kind, id] = ['a', name];
    const server = kind === 'a' ? this.servers.get(id) : undefined;
    if (server !== undefined) return { rcode: 'NOERROR', answers: q.type === 'A' ? [{ type: 'A', name: q.name, ttl: this.ttl, class: 'IN', data: server }] : [] };
    const p = this.identities.get(id);
    const fileHost = kind === 'a' ? this.hosted.onOther(id) : undefined;
    if (!p && fileHost !== undefined)
      return { rcode: 'NOERROR', answers: q.type === 'A' ? [{ type: 'A', name: q.name, ttl: this.ttl, class: 'IN', data: fileHost ? this.otherAddress : this.address }] : [] };
    if (!p) return { rcode: 'NXDOMAIN', answers: [] };
    const f = p.faults;
    const base: Partial<DnsAnswer> = {};
    if (f.timeout === 'dns' || f.timeout === 'both') return { rcode: 'NOERROR', answers: [], silent: true };
    if (f.delayMs?.dns) base.delayMs = f.delayMs.dns;
    const out = (answers: dnsPacket.Answer[]): DnsAnswer => ({ ...base, rcode: 'NOERROR', answers });
    if (kind === 'a') return out(q.type === 'A' ? [{ type: 'A', name: q.name, ttl: this.ttl, class: 'IN', data: this.address }] : []);
    if (!p.dns) return { ...base, rcode: 'NXDOMAIN', answers: [] };
    if (kind === 'txt') {
      const key = f.dnsKeyBytes ?? p.publicKey;
      return out(q.type === 'TXT' ? [{ type: 'TXT', name: q.name, ttl: this.ttl, class: 'IN', data: [`${this.ids.txt_pubkey_prefix}${encodeBase64url(key)}`] }] : []);
    }
    if (!p.encryptionPublicKey) return { ...base, rcode: 'NXDOMAIN', answers: [] };
    return out(q.type === 'TXT' ? [{ type: 'TXT', name: q.name, ttl: this.ttl, class: 'IN', data: [`${this.ids.txt_enckey_prefix}${encodeBase64url(p.encryptionPublicKey)}`] }] : []);
  }

  documentOf(p: Published): Record<string, unknown> | undefined {
    if (!p.seed) return undefined;
    const fields: Record<string, unknown> = {
      version: 1,
      identity: p.identity,
      public_key: formatKey(p.publicKey, 'signing'),
      relay: p.relay,
      updated_at: p.updatedAt,
    };
    if (p.encryptionPublicKey) fields.encryption_public_key = formatKey(p.encryptionPublicKey, 'encryption');
    if (p.previousKeys.length > 0) fields.previous_keys = p.previousKeys.map((k) => ({ public_key: formatKey(k.publicKey, 'signing'), valid_until: k.validUntil }));
    const doc: Record<string, unknown> = signDocument(fields, p.seed);
    if (p.faults.badSignature) {
      const sig = Buffer.from(doc.signature as string, 'base64url');
      sig[0] = sig[0]! ^ 0x01;
      doc.signature = encodeBase64url(sig);
    }
    return doc;
  }

  serveDocument(req: IncomingMessage, res: ServerResponse): void {
    const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    const path = (req.url ?? '/').split('?')[0];
    const p = this.identities.get(host);
    if ((req.method === 'GET' || req.method === 'HEAD') && !p && this.hosted.handle(req, res, host, path ?? '/')) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      reply(res, 405, { error: 'method_not_allowed', detail: 'GET only' });
      return;
    }
    if (p && path === this.ids.profile_document_path && p.profile && p.https) return reply(res, 200, p.profile);
    if (p && path === this.ids.capabilities_path && p.capabilities && p.https) return reply(res, 200, p.capabilities);
    if (path !== this.ids.id_document_path || !p) {
      reply(res, 404, { error: 'not_found', detail: `no identity document at https://${host}${path}` });
      return;
    }
    const f = p.faults;
    if (f.timeout === 'https' || f.timeout === 'both') {
      this.held.add(res);
      res.on('close', () => this.held.delete(res));
      return;
    }
    const send = () => {
      if (!p.https) return reply(res, 404, { error: 'not_found', detail: `${p.identity} publishes no identity document` });
      if (f.httpsStatus) return reply(res, f.httpsStatus, { error: 'fault', detail: `injected status ${f.httpsStatus}` });
      if (f.redirect) {
        const location = f.redirect === true ? `https://${this.address}${this.httpsPort === 443 ? '' : `:${this.httpsPort}`}${this.ids.id_document_path}` : f.redirect;
        res.writeHead(302, { location, 'cache-control': 'no-store', 'content-length': 0 });
        return res.end();
      }
      const doc = this.documentOf(p);
      if (!doc) return reply(res, 404, { error: 'not_found', detail: `no seed known for ${p.identity}: publish with a seed to serve its document` });
      if (f.oversize) {
        const size = f.oversize === true ? OVERSIZE_DEFAULT : f.oversize;
        doc.padding = 'x'.repeat(Math.max(0, size - JSON.stringify(doc).length - 14));
      }
      return reply(res, 200, doc, { 'cache-control': p.cacheControl });
    };
    const delay = f.delayMs?.https;
    if (delay && delay > 0) {
      this.held.add(res);
      const t = setTimeout(() => {
        this.held.delete(res);
        if (!res.destroyed) send();
      }, delay);
      res.on('close', () => {
        clearTimeout(t);
        this.held.delete(res);
      });
    } else send();
  }

  need(identity: string): Published {
    const id = validServiceName(identity);
    const p = id === undefined ? undefined : this.identities.get(id);
    if (!p) throw new AuthorityError(`unknown identity ${identity}`, 404);
    return p;
  }

  infoOf(p: Published): IdentityInfo {
    const faults: Record<string, unknown> = { ...p.faults };
    delete faults.dnsKeyBytes;
    if (p.faults.dnsKeyBytes) faults.dnsKey = formatKey(p.faults.dnsKeyBytes);
    const info: IdentityInfo = {
      identity: p.identity,
      public_key: formatKey(p.publicKey),
      previous_keys: p.previousKeys.map((k) => ({ public_key: formatKey(k.publicKey), valid_until: k.validUntil })),
      dns: p.dns,
      https: p.https,
      faults,
    };
    if (p.encryptionPublicKey) info.encryption_public_key = formatKey(p.encryptionPublicKey, 'encryption');
    const doc = p.https ? this.documentOf({ ...p, faults: {} }) : undefined;
    if (doc) info.document = doc;
    return info;
  }

  async publish(spec: PublishSpec): Promise<IdentityInfo> {
    const identity = validServiceName(spec.identity);
    if (identity === undefined) throw new AuthorityError(`${JSON.stringify(spec.identity)} is not a valid service name`);
    let seed: Uint8Array | undefined;
    let publicKey: Uint8Array;
    if (spec.seed !== undefined) {
      seed = toSeed(spec.seed);
      publicKey = publicKeyFromSeed(seed);
      if (spec.publicKey !== undefined && !Buffer.from(toPublicKey(spec.publicKey)).equals(publicKey)) throw new AuthorityError('publicKey does not belong to seed');
    } else if (spec.publicKey !== undefined) publicKey = toPublicKey(spec.publicKey);
    else throw new AuthorityError('publish needs a seed or a publicKey');
    const https = spec.https ?? seed !== undefined;
    if (https && !seed) throw new AuthorityError('serving the identity document over HTTPS needs the seed (the document is signed by the current key)');
    const previousKeys = (spec.previousKeys ?? []).map((k) => {
      if (parseRfc3339(k.validUntil) === undefined) throw new AuthorityError('previousKeys[].validUntil must be RFC 3339');
      return { publicKey: toPublicKey(k.publicKey), validUntil: k.validUntil };
    });
    const p: Published = {
      identity,
      publicKey,
      previousKeys,
      dns: spec.dns ?? true,
      https,
      relay: spec.relay ?? identity,
      cacheControl: spec.cacheControl ?? 'no-store',
      updatedAt: formatRfc3339(Date.now()),
      faults: this.identities.get(identity)?.faults ?? {},
    };
    if (seed) p.seed = seed;
    if (spec.profile !== undefined) p.profile = spec.profile;
    if (spec.capabilities !== undefined) p.capabilities = spec.capabilities;
    if (spec.encryptionPublicKey !== undefined) p.encryptionPublicKey = toPublicKey(spec.encryptionPublicKey, 'encryption');
    this.identities.set(identity, p);
    return this.infoOf(p);
  }

  async rotate(identity: string, newSeedOrKey: KeyInput, opts: RotateOptions = {}): Promise<IdentityInfo> {
    const p = this.need(identity);
    const next = seedOrKey(newSeedOrKey);
    if (p.https && !next.seed) throw new AuthorityError('rotating a key served over HTTPS needs the new seed (the document is signed by the current key)');
    if (opts.validUntil !== undefined && parseRfc3339(opts.validUntil) === undefined) throw new AuthorityError('validUntil must be RFC 3339');
    const validUntil = opts.validUntil ?? formatRfc3339(Date.now() + (opts.graceSeconds ?? 0) * 1000);
    p.previousKeys = [{ publicKey: p.publicKey, validUntil }, ...p.previousKeys.filter((k) => !Buffer.from(k.publicKey).equals(next.publicKey))];
    p.publicKey = next.publicKey;
    if (next.seed) p.seed = next.seed;
    else delete p.seed;
    p.updatedAt = formatRfc3339(Date.now());
    return this.infoOf(p);
  }

  async drop(identity: string, what: 'dns' | 'https' | 'both'): Promise<IdentityInfo> {
    const p = this.need(identity);
    if (what !== 'dns' && what !== 'https' && what !== 'both') throw new AuthorityError('drop takes dns, https or both');
    if (what !== 'https') p.dns = false;
    if (what !== 'dns') p.https = false;
    p.updatedAt = formatRfc3339(Date.now());
    return this.infoOf(p);
  }

  async fault(identity: string, fault: FaultSpec): Promise<IdentityInfo> {
    const p = this.need(identity);
    const next: Published['faults'] = { ...p.faults, ...fault };
    if (fault.dnsKey !== undefined) {
      next.dnsKeyBytes = fault.dnsKey === true ? publicKeyFromSeed(new Uint8Array(randomBytes(32))) : toPublicKey(fault.dnsKey);
      delete next.dnsKey;
    }
    if (fault.timeout !== undefined && !['dns', 'https', 'both'].includes(fault.timeout)) throw new AuthorityError('timeout takes dns, https or both');
    if (fault.httpsStatus !== undefined && (!Number.isInteger(fault.httpsStatus) || fault.httpsStatus < 100 || fault.httpsStatus > 599)) throw new AuthorityError('httpsStatus must be an HTTP status');
    p.faults = next;
    return this.infoOf(p);
  }

  async clearFaults(identity: string): Promise<IdentityInfo> {
    const p = this.need(identity);
    p.faults = {};
    for (const res of this.held) res.destroy();
    return this.infoOf(p);
  }

  async newIdentity(opts: NewIdentityOptions = {}) {
    const label = opts.label ?? `t${randomBytes(6).toString('hex')}`;
    const identity = `${label}.${opts.zone ?? this.zone}`;
    const seed = new Uint8Array(randomBytes(32));
    const spec: PublishSpec = { identity, seed };
    if (opts.encryption) spec.encryptionPublicKey = new Uint8Array(randomBytes(32));
    if (opts.dns !== undefined) spec.dns = opts.dns;
    if (opts.https !== undefined) spec.https = opts.https;
    if (opts.profile !== undefined) spec.profile = opts.profile;
    const info = await this.publish(spec);
    return { identity: info.identity, seed, publicKey: info.public_key };
  }

  async identity(identity: string) {
    const id = validServiceName(identity);
    const p = id === undefined ? undefined : this.identities.get(id);
    return p ? this.infoOf(p) : undefined;
  }

  async serveFile(spec: FileSpec): Promise<HostedFile> {
    return this.hosted.serve(spec);
  }

  async file(url: string): Promise<HostedFile | undefined> {
    return this.hosted.file(url);
  }
}
