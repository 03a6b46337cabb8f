// The `profile` scope's claims (document 2, Scopes and claims): `name` and `picture` come from the
// identity's public profile document, read when the claims are released (consent, or a code from a
// stored consent). `picture` is the avatar's URL on the identity's own origin, never proxied. A
// missing, unreachable or invalid profile releases neither; `profile` (the profile URL) needs none.
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

  /** The claims of `identity`'s public profile; {} when there is none to read. */
  async read(identity: string): Promise<ProfileClaims> {
    const ids = this.options.profile.ids;
    let doc: unknown;
    try {
      const res = await request(`https://${identity}${ids.profile_document_path}`, {
        dispatcher: this.#agent,
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      if (res.statusCode !== 200) {
        await res.body.dump().catch(() => undefined);
        return {};
      }
      const chunks: Buffer[] = [];
      let total = 0;
      for await (const chunk of res.body) {
        total += (chunk as Buffer).length;
        if (total > MAX_BYTES) {
          res.body.destroy();
          return {};
        }
        chunks.push(chunk as Buffer);
      }
      doc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return {};
    }
    if (!checkProfileDocument(doc).ok) return {};
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
