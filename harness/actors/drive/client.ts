// A drive client over HTTP (document 3, Drive API): every call authenticates as its actor, an
// identity with the challenge headers (a challenge fetched from the drive's relay for that
// identity, homed there or not) or a link holder with the link headers; uploads go through
// whatever `upload` the missing list answers (same origin or not, its headers as given), and a
// chunk read follows a redirect (a relay may serve chunks from presigned storage URLs).
import { createHash, randomBytes } from 'node:crypto';
import type { Profile } from '../../../protocol/common/profile.ts';
import type { HttpClient, HttpResponse } from '../http.ts';
import { challengeHeaders } from '../relay/envelope.ts';
import { openEvents, type SseStream } from '../relay/sse.ts';
import type { Chunk } from './objects.ts';

type Obj = Record<string, unknown>;

/**
 * Who calls: an identity (with, for a member of a group, the group's roster header), a link holder
 * (its verifier as bytes, sent base64url, or as the header's text itself), or nobody.
 */
export type DriveActor = { identity: string; seed: Uint8Array; roster?: string } | { link: string; verifier?: Uint8Array | string; pow?: string } | { none: true };

/** Why an upload stopped, and the answer that refused it when one did. */
export interface UploadProblem {
  text: string;
  answer?: HttpResponse;
}

export class DriveClient {
  constructor(
    readonly profile: Profile,
    /** The drive's relay, base URL. */
    readonly url: string,
    readonly http: HttpClient,
    readonly signal?: AbortSignal,
  ) {}

  /** The headers that authenticate `actor` for one request. */
  async headers(actor: DriveActor): Promise<Record<string, string>> {
    const ids = this.profile.ids;
    if ('none' in actor) return {};
    if ('link' in actor)
      return {
        [ids.header_link.toLowerCase()]: actor.link,
        ...(actor.verifier !== undefined ? { [ids.header_link_verifier.toLowerCase()]: typeof actor.verifier === 'string' ? actor.verifier : Buffer.from(actor.verifier).toString('base64url') } : {}),
        ...(actor.pow ? { [ids.header_link_pow.toLowerCase()]: actor.pow } : {}),
      };
    const r = await this.http.get(`${this.url}/auth/challenge?identity=${encodeURIComponent(actor.identity)}`);
    const challenge = (r.status === 200 ? (r.json() as Obj).challenge : undefined) as string | undefined;
    if (typeof challenge !== 'string') throw new Error(`GET /auth/challenge for ${actor.identity} answered ${r.status}: ${r.text().slice(0, 200)}`);
    return { ...challengeHeaders(this.profile, actor.identity, challenge, actor.seed), ...(actor.roster !== undefined ? { [ids.header_group_roster.toLowerCase()]: actor.roster } : {}) };
  }

  path(drive: string, rest = ''): string {
    return `${this.url}/drive/${encodeURIComponent(drive)}${rest}`;
  }

  async get(drive: string, rest: string, actor: DriveActor, maxBodyBytes?: number): Promise<HttpResponse> {
    return this.http.get(this.path(drive, rest), { headers: { accept: 'application/json', ...(await this.headers(actor)) }, ...(maxBodyBytes ? { maxBodyBytes } : {}) });
  }

  async post(drive: string, rest: string, actor: DriveActor, body: Obj): Promise<HttpResponse> {
    return this.http.post(this.path(drive, rest), JSON.stringify(body), { headers: { 'content-type': 'application/json', ...(await this.headers(actor)) } });
  }

  root(drive: string, actor: DriveActor): Promise<HttpResponse> {
    return this.get(drive, '', actor);
  }

  commit(drive: string, actor: DriveActor, body: Obj): Promise<HttpResponse> {
    return this.post(drive, '/commit', actor, body);
  }

  /**
   * Ends share `share`. Document 3 shows no unshare body: `{unshare: {id}}` (the deployed client's)
   * is sent, and `{unshare: {share}}` (the project's earlier form) when that one is refused 400.
   */
  async unshare(drive: string, actor: DriveActor, share: string): Promise<HttpResponse> {
    const first = await this.commit(drive, actor, { id: randomBytes(16).toString('hex'), unshare: { id: share } });
    return first.status === 400 ? this.commit(drive, actor, { id: randomBytes(16).toString('hex'), unshare: { share } }) : first;
  }

  /** Each chunk whose bytes are at hand also names its MD5, which a relay on object storage signs into the upload URL. */
  missing(drive: string, actor: DriveActor, chunks: readonly (Pick<Chunk, 'id' | 'size'> & { bytes?: Uint8Array })[]): Promise<HttpResponse> {
    const ref = (c: (typeof chunks)[number]) => ({ id: c.id, size: c.size, ...(c.bytes ? { md5: createHash('md5').update(c.bytes).digest('base64') } : {}) });
    return this.post(drive, '/chunks/missing', actor, { chunks: chunks.map(ref) });
  }

  async putChunk(drive: string, actor: DriveActor, chunk: Pick<Chunk, 'id' | 'bytes'>, url = this.path(drive, `/chunks/${chunk.id}`), headers: Record<string, string> = {}): Promise<HttpResponse> {
    const same = new URL(url, this.url).origin === new URL(this.url).origin;
    return this.http.request(new URL(url, this.url).href, {
      method: 'PUT',
      body: chunk.bytes,
      headers: { 'content-type': 'application/octet-stream', ...headers, ...(same ? await this.headers(actor) : {}) },
    });
  }

  /**
   * `n` uploads of one chunk in flight together: each sends its body but the last byte, and the
   * last bytes go once every upload has sent the rest, so the relay handles them side by side
   * (sent whole one after the other, the first is often stored before the next has arrived).
   */
  async putTogether(drive: string, actor: DriveActor, chunk: Pick<Chunk, 'id' | 'bytes'>, n: number): Promise<HttpResponse[]> {
    const all = await Promise.all(Array.from({ length: n }, () => this.headers(actor)));
    const last = chunk.bytes.length - 1;
    let sent = 0;
    let release = () => undefined as void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    async function* parts(): AsyncGenerator<Uint8Array> {
      yield chunk.bytes.subarray(0, last);
      if (++sent === n) release();
      await gate;
      yield chunk.bytes.subarray(last);
    }
    const url = this.path(drive, `/chunks/${chunk.id}`);
    return Promise.all(
      all.map((h) =>
        this.http.request(url, {
          method: 'PUT',
          parts: parts(),
          headers: { 'content-type': 'application/octet-stream', 'content-length': String(chunk.bytes.length), ...h },
          ...(this.signal ? { signal: this.signal } : {}),
        }),
      ),
    );
  }

  /**
   * Uploads what the drive lacks, through the missing list's answers; the first problem as text,
   * or undefined when every chunk is stored.
   */
  async upload(drive: string, actor: DriveActor, chunks: readonly Chunk[]): Promise<string | undefined> {
    return (await this.uploadChunks(drive, actor, chunks))?.text;
  }

  /** As upload, keeping the answer that refused (the missing list's or an upload's), when one did. */
  async uploadChunks(drive: string, actor: DriveActor, chunks: readonly Chunk[]): Promise<UploadProblem | undefined> {
    if (chunks.length === 0) return undefined;
    const r = await this.missing(drive, actor, chunks);
    const list = r.status === 200 ? (r.json() as Obj).missing : undefined;
    if (!Array.isArray(list)) return { text: `chunks/missing answered ${r.status}: ${r.text().slice(0, 300)}`, answer: r };
    for (const m of list as Obj[]) {
      const chunk = chunks.find((c) => c.id === m.id);
      const up = (m.upload ?? {}) as Obj;
      if (!chunk || typeof up.url !== 'string') return { text: `chunks/missing listed ${JSON.stringify(m).slice(0, 200)}, which names no chunk of the request or no upload URL` };
      const put = await this.putChunk(drive, actor, chunk, up.url, (up.headers ?? {}) as Record<string, string>);
      if (put.status < 200 || put.status >= 300) return { text: `uploading ${chunk.id} to ${up.url} answered ${put.status}: ${put.text().slice(0, 300)}`, answer: put };
    }
    return undefined;
  }

  changes(drive: string, actor: DriveActor, cursor: number | string = 0): Promise<HttpResponse> {
    return this.get(drive, `/changes?cursor=${cursor}`, actor);
  }

  node(drive: string, actor: DriveActor, node: string, sub = ''): Promise<HttpResponse> {
    return this.get(drive, `/nodes/${node}${sub}`, actor);
  }

  /** A chunk, following up to two redirects (the actor's headers go only to the relay's origin). */
  async chunk(drive: string, actor: DriveActor, node: string, version: string | undefined, hash: string): Promise<HttpResponse> {
    const max = 8 * 1024 * 1024;
    let r = await this.get(drive, version === undefined ? `/nodes/${node}/chunks/${hash}` : `/nodes/${node}/versions/${version}/chunks/${hash}`, actor, max);
    for (let hop = 0; hop < 2 && [301, 302, 303, 307, 308].includes(r.status); hop++) {
      const location = r.headers.location;
      if (typeof location !== 'string') break;
      const next = new URL(location, r.url);
      const same = next.origin === new URL(this.url).origin;
      r = await this.http.get(next.href, { headers: same ? await this.headers(actor) : {}, maxBodyBytes: max });
    }
    return r;
  }

  link(drive: string, link: string): Promise<HttpResponse> {
    return this.http.get(this.path(drive, `/links/${link}`), { headers: { accept: 'application/json' } });
  }

  async events(drive: string, actor: DriveActor): Promise<SseStream> {
    return openEvents(this.path(drive, '/events'), await this.headers(actor), this.signal ? { signal: this.signal } : {});
  }
}
