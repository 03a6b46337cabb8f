// AuthorityClient: the authority's operations over its admin API (admin.ts lists the routes), so
// a suite or the CLI drives a running `svc-conformance authority` like an in-process one.
import { decodeBase64Any, encodeBase64url } from '../../../protocol/common/base64.ts';
import { formatKey } from '../../../protocol/common/keys.ts';
import { HttpClient, HttpError } from '../http.ts';
import { EnvironmentError } from '../../run/verdict.ts';
import {
  AuthorityError,
  type AuthorityControl,
  type AuthorityInfo,
  type FaultSpec,
  type FileSpec,
  type HostedFile,
  type IdentityInfo,
  type KeyInput,
  type NewIdentityOptions,
  type PublishSpec,
  type RotateOptions,
} from './types.ts';

const seedText = (k: KeyInput) => (typeof k === 'string' ? k : encodeBase64url(k));
const keyText = (k: KeyInput, kind: 'signing' | 'encryption' = 'signing') => (typeof k === 'string' ? k : formatKey(k, kind));

export class AuthorityClient implements AuthorityControl {
  readonly adminUrl: string;
  readonly #http: HttpClient;

  constructor(adminUrl: string, http: HttpClient = new HttpClient({ timeoutMs: 10_000 })) {
    this.adminUrl = adminUrl.replace(/\/+$/, '');
    this.#http = http;
  }

  async #call<T>(method: string, path: string, body?: Record<string, unknown>): Promise<T> {
    let data: Record<string, unknown>;
    let res;
    try {
      res = await this.#http.request(`${this.adminUrl}${path}`, { method, ...(body !== undefined ? { body } : {}), headers: { accept: 'application/json' } });
      data = res.json() as Record<string, unknown>;
    } catch (error) {
      // The authority is the harness's helper: its silence is no verdict on the target.
      if (error instanceof HttpError) throw new EnvironmentError('helper-unavailable', `the test authority's admin API did not answer ${method} ${path}: ${error.message}`);
      throw error;
    }
    if (res.status !== 200) throw new AuthorityError(`authority ${method} ${path}: ${res.status} ${String(data.detail ?? data.error ?? '')}`, res.status);
    return data as T;
  }

  info(): Promise<AuthorityInfo> {
    return this.#call('GET', '/info');
  }

  publish(spec: PublishSpec): Promise<IdentityInfo> {
    const body: Record<string, unknown> = { ...spec };
    if (spec.seed !== undefined) body.seed = seedText(spec.seed);
    if (spec.publicKey !== undefined) body.publicKey = keyText(spec.publicKey);
    if (spec.encryptionPublicKey !== undefined) body.encryptionPublicKey = keyText(spec.encryptionPublicKey, 'encryption');
    if (spec.previousKeys) body.previousKeys = spec.previousKeys.map((k) => ({ publicKey: keyText(k.publicKey), validUntil: k.validUntil }));
    return this.#call('POST', '/identities', body);
  }

  rotate(identity: string, newSeedOrKey: KeyInput, options: RotateOptions = {}): Promise<IdentityInfo> {
    return this.#call('POST', `/identities/${encodeURIComponent(identity)}/rotate`, { key: seedText(newSeedOrKey), ...options });
  }

  drop(identity: string, what: 'dns' | 'https' | 'both'): Promise<IdentityInfo> {
    return this.#call('POST', `/identities/${encodeURIComponent(identity)}/drop`, { what });
  }

  fault(identity: string, fault: FaultSpec): Promise<IdentityInfo> {
    const body: Record<string, unknown> = { ...fault };
    if (fault.dnsKey !== undefined && fault.dnsKey !== true) body.dnsKey = keyText(fault.dnsKey);
    return this.#call('POST', `/identities/${encodeURIComponent(identity)}/fault`, body);
  }

  clearFaults(identity: string): Promise<IdentityInfo> {
    return this.#call('DELETE', `/identities/${encodeURIComponent(identity)}/fault`);
  }

  async newIdentity(options: NewIdentityOptions = {}): Promise<{ identity: string; seed: Uint8Array<ArrayBuffer>; publicKey: string }> {
    const data = await this.#call<{ identity: string; seed: string; publicKey: string }>('POST', '/identities/new', { ...options });
    const seed = decodeBase64Any(data.seed);
    if (!seed) throw new AuthorityError('the authority answered a seed that is not base64');
    return { identity: data.identity, seed: new Uint8Array(seed), publicKey: data.publicKey };
  }

  async identity(identity: string): Promise<IdentityInfo | undefined> {
    try {
      return await this.#call<IdentityInfo>('GET', `/identities/${encodeURIComponent(identity)}`);
    } catch (error) {
      if (error instanceof AuthorityError && error.status === 404) return undefined;
      throw error;
    }
  }

  serveFile(spec: FileSpec): Promise<HostedFile> {
    return this.#call('POST', '/files', { ...spec });
  }

  async file(url: string): Promise<HostedFile | undefined> {
    try {
      return await this.#call<HostedFile>('GET', `/files?url=${encodeURIComponent(url)}`);
    } catch (error) {
      if (error instanceof AuthorityError && error.status === 404) return undefined;
      throw error;
    }
  }

  close(): Promise<void> {
    return this.#http.close();
  }
}
