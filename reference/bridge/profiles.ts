// The `profile` scope's claims (document 2, Scopes and claims): `name` and `picture` come from the
// identity's public profile document, read when the claims are released (consent, or a code from a
// stored consent). `picture` is the avatar's URL on the identity's own origin, never proxied. A
// missing, unreachable or invalid profile releases neither; `profile` (the profile URL) needs none.
// The identity's capabilities document is read here too, for the signer it declares.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { limits } from '../../schemas/ts/limits.ts';
import type { Profile } from '../../protocol/common/profile.ts';
import { checkProfileDocument } from '../../protocol/bridge/profile-document.ts';
import { Dns } from '../resolve/dns.ts';
import type { ProfileClaims } from './store.ts';
import { trusting } from '../../protocol/common/trust.ts';

export interface ProfileReaderOptions {
  profile: Profile;
  dnsServer?: string;
  caFile?: string;
  timeoutMs: number;
}

const MAX_BYTES = limits.identity_document_body_max_bytes;

export class ProfileReader {
  readonly #agent: Agent;

  constructor(readonly options: ProfileReaderOptions) {
    const lookup = options.dnsServer !== undefined ? new Dns({ server: options.dnsServer, timeoutMs: options.timeoutMs }).lookup() : undefined;
    const extra = options.caFile !== undefined ? readFileSync(options.caFile, 'utf8') : undefined;
    this.#agent = new Agent({
      connect: { timeout: options.timeoutMs, ...(lookup ? { lookup: lookup as never } : {}), ...trusting(extra) },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  /** A JSON document on the identity's own origin; undefined when it is missing, too large or not JSON. */
  async #json(url: string): Promise<unknown> {
    try {
      const res = await request(url, { dispatcher: this.#agent, headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.options.timeoutMs) });
      if (res.statusCode !== 200) {
        await res.body.dump().catch(() => undefined);
        return undefined;
      }
      const chunks: Buffer[] = [];
      let total = 0;
      for await (const chunk of res.body) {
        total += (chunk as Buffer).length;
        if (total > MAX_BYTES) {
          res.body.destroy();
          return undefined;
        }
        chunks.push(chunk as Buffer);
      }
      return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return undefined;
    }
  }

  /**
   * `endpoints.web_signer` from the identity's capabilities document (document 2, Finding a signer,
   * step 1; the file document 3 serves at capabilities_path), as declared (findSigners offers it
   * only when it is an https URL); undefined when there is none, so the next step decides.
   */
  async webSigner(identity: string): Promise<string | undefined> {
    const doc = await this.#json(`https://${identity}${this.options.profile.ids.capabilities_path}`);
    const declared = (doc as { endpoints?: { web_signer?: unknown } } | undefined)?.endpoints?.web_signer;
    return typeof declared === 'string' ? declared : undefined;
  }

  /** The claims of `identity`'s public profile; {} when there is none to read. */
  async read(identity: string): Promise<ProfileClaims> {
    const ids = this.options.profile.ids;
    const doc = await this.#json(`https://${identity}${ids.profile_document_path}`);
    if (doc === undefined || !checkProfileDocument(doc).ok) return {};
    const p = doc as { display_name?: unknown; avatar?: unknown };
    const out: ProfileClaims = {};
    if (typeof p.display_name === 'string' && p.display_name.trim() !== '') out.name = p.display_name;
    if (typeof p.avatar === 'string' && p.avatar !== '') out.picture = `https://${identity}${ids.public_files_path}${p.avatar}`;
    return out;
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
