// The drive suite's conversation with a relay: the relay suite's session (identities homed at the
// relay or its peer through the test authority) plus a drive client whose exchanges join the
// evidence, and the few steps every check builds on: an owner with a root, folders, files with
// content uploaded through the missing list, and shares.
import { HttpClient, type HttpResponse } from '../../actors/http.ts';
import { DriveClient, type DriveActor } from '../../actors/drive/client.ts';
import { create, encryptContent, groupRoster, hex16, nodeKeys, record, rosterHeader, share, type Chunk, type NodeKeys, type ShareInput } from '../../actors/drive/objects.ts';
import type { RelayIdentity } from '../../actors/relay/index.ts';
import { CheckFailure, Session, isObject, safeJson, said, type RelayTarget } from '../relay/driver.ts';
import { statusIn } from '../../run/answers.ts';

export { CheckFailure, isObject, safeJson, said };
export type { RelayTarget };

type Obj = Record<string, unknown>;
export const ok = (r: HttpResponse): boolean => r.status >= 200 && r.status < 300;
export const refused = (r: HttpResponse): boolean => statusIn(r, 400, 500);

/** A file or folder a check made, with what it needs to change or read it. */
export interface Made {
  keys: NodeKeys;
  version: string;
  kind: 'file' | 'folder';
  chunks: Chunk[];
  plaintext?: Uint8Array;
}

export class DriveSession extends Session {
  readonly drive: DriveClient;
  readonly #http: HttpClient;

  constructor(target: RelayTarget, signal?: AbortSignal) {
    super(target, signal);
    this.#http = new HttpClient({ timeoutMs: target.requestTimeoutMs, evidenceBytes: 1024, keepExchanges: 0, maxBodyBytes: 8 * 1024 * 1024, onExchange: (e) => void this.exchanges.push(e) });
    this.drive = new DriveClient(target.profile, target.url, this.#http, signal);
  }

  override async close(): Promise<void> {
    await super.close();
    await this.#http.close().catch(() => undefined);
  }

  /** An identity as a drive caller (challenge headers from the drive's relay, homed there or not). */
  actor(id: RelayIdentity): DriveActor {
    return { identity: id.identity, seed: id.seed };
  }

  /** A new owner and its drive's root folder. */
  async owner(): Promise<{ id: RelayIdentity; root: Made }> {
    const id = await this.identity();
    const keys = nodeKeys();
    const body = create(this.profile, { drive: id.identity, author: id, keys, kind: 'folder', at: {}, ownerEncryption: id.encryption.publicKey });
    const r = await this.drive.commit(id.identity, this.actor(id), body);
    if (!ok(r)) throw new CheckFailure(`the owner's commit creating its root answered ${said(r)}`);
    return { id, root: { keys, version: String((body.manifest as Obj).version), kind: 'folder', chunks: [] } };
  }

  async folder(owner: RelayIdentity, into: NodeKeys, name: string, author: RelayIdentity = owner): Promise<Made> {
    const keys = nodeKeys();
    const body = create(this.profile, { drive: owner.identity, author, keys, kind: 'folder', at: { folder: into, name }, ownerEncryption: owner.encryption.publicKey });
    const r = await this.drive.commit(owner.identity, this.actor(author), body);
    if (!ok(r)) throw new CheckFailure(`creating folder ${name} answered ${said(r)}`);
    return { keys, version: String((body.manifest as Obj).version), kind: 'folder', chunks: [] };
  }

  /** A file created with `plaintext`, its chunks uploaded through the missing list first. */
  async file(owner: RelayIdentity, into: NodeKeys, name: string, plaintext: Uint8Array, o: { author?: RelayIdentity; mode?: 'replace' | 'append' } = {}): Promise<Made> {
    const author = o.author ?? owner;
    const keys = nodeKeys(undefined, true);
    const chunks = plaintext.length > 0 || o.mode !== 'append' ? encryptContent(this.profile, owner.identity, keys, plaintext) : [];
    const problem = await this.drive.upload(owner.identity, this.actor(author), chunks);
    if (problem) throw new CheckFailure(problem);
    const body = create(this.profile, {
      drive: owner.identity,
      author,
      keys,
      kind: 'file',
      at: { folder: into, name },
      ownerEncryption: owner.encryption.publicKey,
      chunks,
      ...(o.mode ? { mode: o.mode } : {}),
    });
    const r = await this.drive.commit(owner.identity, this.actor(author), body);
    if (!ok(r)) throw new CheckFailure(`creating file ${name} answered ${said(r)}`);
    return { keys, version: String((body.manifest as Obj).version), kind: 'file', chunks, plaintext };
  }

  /** An append file `name` in `into` holding one record of the owner's, its content's chunks (what a download of the record reads). */
  async log(owner: RelayIdentity, into: NodeKeys, name: string, content: Uint8Array = new Uint8Array(Buffer.from(`record of ${name}`))): Promise<{ log: Made; chunks: Chunk[] }> {
    const log = await this.file(owner, into, name, new Uint8Array(0), { mode: 'append' });
    const chunks = encryptContent(this.profile, owner.identity, log.keys, content);
    const problem = await this.drive.upload(owner.identity, this.actor(owner), chunks);
    if (problem) throw new CheckFailure(problem);
    const r = await this.drive.commit(owner.identity, this.actor(owner), {
      id: hex16(),
      records: [record(this.profile, { drive: owner.identity, node: log.keys, author: owner, sequence: 1, previous: '', chunks })],
    });
    if (!ok(r)) throw new CheckFailure(`appending to ${name} answered ${said(r)}`);
    return { log, chunks };
  }

  /** Shares `node` with a member (or a link); the share's body as committed. */
  async share(owner: RelayIdentity, input: Omit<ShareInput, 'drive' | 'issuer'> & { issuer?: RelayIdentity }): Promise<{ body: Obj; share: Obj; linkKey?: Uint8Array }> {
    const made = share(this.profile, { drive: owner.identity, issuer: input.issuer ?? owner, ...input });
    const r = await this.drive.commit(owner.identity, this.actor(input.issuer ?? owner), made.body);
    if (!ok(r)) throw new CheckFailure(`committing a ${input.role} share answered ${said(r)}`);
    return { body: made.body, share: made.body.share as Obj, ...(made.linkKey ? { linkKey: made.linkKey } : {}) };
  }

  /** The drive's last change sequence (the cursor a read from 0 ends at: a check's small drive is one page), and the answer to show. */
  async lastChange(drive: string, actor: DriveActor): Promise<{ at: string; shown: string }> {
    const r = await this.drive.changes(drive, actor, 0);
    return { at: String(bodyOf(r)?.cursor), shown: said(r) };
  }

  async unshare(owner: RelayIdentity, shareId: string): Promise<HttpResponse> {
    return this.drive.unshare(owner.identity, this.actor(owner), shareId);
  }
}

/** The `head` of a 409 answer, when the body carries one that names `version`. */
/** A group identity on the peer relay and one member, with the roster header the group signed for it. */
export async function groupOnPeer(s: DriveSession): Promise<{ group: RelayIdentity; member: RelayIdentity; roster: string }> {
  const [group, member] = [await s.identity('peer'), await s.identity('peer')];
  return { group, member, roster: rosterHeader(groupRoster(s.profile, group.identity, group, { members: [member.identity], admins: [group.identity], epoch: 0 })) };
}

export function headNames(r: HttpResponse, version: string): boolean {
  return r.text().includes(version);
}

export const bodyOf = (r: HttpResponse): Obj | undefined => {
  const b = safeJson(r);
  return isObject(b) ? b : undefined;
};
