// Durability of the reference drive: an owner's commits (new files with encrypted content uploaded
// through the missing list, several in flight, and replaces of one file on its head) run while the
// relay is killed with SIGKILL after a random number of 200s. After a restart on the same data
// directory every 200 reads back (manifest, pages, chunks that decrypt to the plaintext), no
// refused commit is visible, and a commit whose answer was lost is whole or absent, never partial.
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { DriveClient, type DriveActor } from '../../harness/actors/drive/client.ts';
import { create, decryptChunk, encryptContent, nodeKeys, replace, type Chunk, type NodeKeys } from '../../harness/actors/drive/objects.ts';
import { HttpClient } from '../../harness/actors/http.ts';
import { newRelayIdentity, type RelayIdentity } from '../../harness/actors/relay/index.ts';
import { spawnReference, type ReferenceChild } from '../../harness/run/spawn.ts';
import { encodeBase64url } from '../../protocol/common/base64.ts';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';

type Obj = Record<string, unknown>;

let authority: Authority;
let dir: string;
const children: ReferenceChild[] = [];
beforeAll(async () => {
  // Cached answers: without them every drive request resolves the owner again (DNS, then HTTPS).
  authority = await startAuthority({ profile, ttl: 300 });
  dir = await mkdtemp(join(tmpdir(), 'svc-drive-durability-'));
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  await authority?.close();
  await rm(dir, { recursive: true, force: true });
});

const relayArgs = (port: string) => ['--port', port, '--data-dir', dir, '--dns-server', authority.dnsServer, '--ca', authority.caFile, '--quiet'];

/** One commit the test sent: what it wrote, and what became of its answer. */
interface Sent {
  kind: 'create' | 'replace';
  keys: NodeKeys;
  version: string;
  chunks: Chunk[];
  plaintext: Uint8Array;
  pages: Obj[];
  outcome: 'accepted' | 'refused' | 'lost';
}

// Small chunks (4 KiB plaintext each), so a file of a few KiB spans several chunks.
const CHUNK_PLAIN = 4092;
const WORKERS = 6;
// Kills and restarts on the same data directory; each restart checks everything sent so far.
const ROUNDS = 3;

describe('the reference drive keeps every 200 through kill -9', () => {
  it('shows each accepted commit whole after crashes mid-load, no refused one, and each lost one whole or not at all', async () => {
    let relay = await spawnReference('relay', relayArgs('0'));
    children.push(relay);
    const port = new URL(relay.url).port;
    const owner: RelayIdentity = newRelayIdentity(`drive-${Date.now().toString(36)}.id.test`);
    await authority.publish({
      identity: owner.identity,
      seed: owner.seed,
      encryptionPublicKey: `x25519:${encodeBase64url(owner.encryption.publicKey)}`,
      relay: new URL(relay.url).host,
      cacheControl: 'max-age=300',
    });
    const actor: DriveActor = { identity: owner.identity, seed: owner.seed };
    const drive = owner.identity;
    const newClient = () => new DriveClient(profile, relay.url, new HttpClient({ timeoutMs: 15_000, keepExchanges: 0, evidenceBytes: 256, maxBodyBytes: 8 * 1024 * 1024 }));
    let client = newClient();

    const rootKeys = nodeKeys();
    const rootBody = create(profile, { drive, author: owner, keys: rootKeys, kind: 'folder', at: {}, ownerEncryption: owner.encryption.publicKey });
    expect((await client.commit(drive, actor, rootBody)).status).toBe(200);

    const sent: Sent[] = [];
    let killed = false;

    /** Sends one commit; its challenge is fetched first, so a failure after that is a commit sent and unanswered. */
    const commit = async (s: Omit<Sent, 'outcome'>, body: Obj, expectRefusal: boolean, onAccepted = () => {}): Promise<Sent> => {
      const headers = await client.headers(actor);
      const entry: Sent = { ...s, outcome: 'lost' };
      sent.push(entry);
      let status: number;
      try {
        status = (await client.http.post(client.path(drive, '/commit'), JSON.stringify(body), { headers: { 'content-type': 'application/json', ...headers } })).status;
      } catch (error) {
        if (killed) return entry;
        throw error;
      }
      if (status === 200 && !expectRefusal) {
        entry.outcome = 'accepted';
        onAccepted();
      } else if (status >= 400 && status < 500 && expectRefusal) entry.outcome = 'refused';
      else throw new Error(`${s.kind} of ${s.keys.node} answered ${status} (refusal expected: ${expectRefusal})`);
      return entry;
    };
    const upload = async (chunks: Chunk[]) => {
      const problem = await client.upload(drive, actor, chunks);
      if (problem) throw new Error(problem);
    };

    // The file the replacer rewrites, created before the load.
    const hot = nodeKeys(undefined, true);
    const hotPlain = new Uint8Array(randomBytes(6000));
    const hotChunks = encryptContent(profile, drive, hot, hotPlain, 1, CHUNK_PLAIN);
    await upload(hotChunks);
    const hotBody = create(profile, { drive, author: owner, keys: hot, kind: 'file', at: { folder: rootKeys, name: 'hot' }, ownerEncryption: owner.encryption.publicKey, chunks: hotChunks });
    const hotFirst = String((hotBody.manifest as Obj).version);
    await commit({ kind: 'create', keys: hot, version: hotFirst, chunks: hotChunks, plaintext: hotPlain, pages: hotBody.pages as Obj[] }, hotBody, false);
    /** The hot file's last accepted version. */
    let head = hotFirst;

    /** What the relay shows of one commit: 'whole', 'absent', or what is partial about it. */
    const shown = async (s: Sent): Promise<string> => {
      const path = `/versions/${s.version}`;
      const v = await client.node(drive, actor, s.keys.node, path);
      if (v.status === 404) {
        // Absent: for a create, no node at all (a node without its version would be partial).
        if (s.kind === 'create' && (await client.node(drive, actor, s.keys.node)).status !== 404) return 'the node exists without its creating version';
        return 'absent';
      }
      if (v.status !== 200) return `version answered ${v.status}`;
      if ((v.json() as Obj).version !== s.version) return 'another manifest under its version';
      const hashes = (v.json() as Obj).pages as string[];
      for (const [i, hash] of hashes.entries()) {
        const p = await client.node(drive, actor, s.keys.node, `${path}/pages/${hash}`);
        if (p.status !== 200) return `page ${i} answered ${p.status}`;
        if (JSON.stringify(p.json()) !== JSON.stringify(s.pages[i])) return `page ${i} differs`;
      }
      const parts: Uint8Array[] = [];
      for (const c of s.chunks) {
        const r = await client.chunk(drive, actor, s.keys.node, s.version, c.id);
        if (r.status !== 200) return `chunk ${c.id} answered ${r.status}`;
        const plain = decryptChunk(profile, drive, s.keys, r.body);
        if (!plain) return `chunk ${c.id} does not decrypt`;
        parts.push(plain);
      }
      return Buffer.concat(parts).equals(Buffer.from(s.plaintext)) ? 'whole' : 'the content differs';
    };

    /** Checks everything sent so far against the restarted relay; the problems found. */
    const verify = async (round: number): Promise<{ problems: string[]; changes: number; visibleOfLost: number }> => {
      const problems: string[] = [];
      let visibleOfLost = 0;
      for (const s of sent) {
        const what = await shown(s);
        if (s.outcome === 'accepted' && what !== 'whole') problems.push(`round ${round}: accepted ${s.kind} ${s.keys.node}/${s.version}: ${what}`);
        if (s.outcome === 'refused' && what !== 'absent') problems.push(`round ${round}: refused ${s.kind} ${s.keys.node}/${s.version} is visible: ${what}`);
        if (s.outcome === 'lost') {
          if (what === 'whole') visibleOfLost++;
          else if (what !== 'absent') problems.push(`round ${round}: lost ${s.kind} ${s.keys.node}/${s.version} is partial: ${what}`);
        }
      }
      // The hot file's head is its last accepted version, or a lost replace sent after it.
      const hotHead = String(((await client.node(drive, actor, hot.node)).json() as Obj).version);
      const after = sent.slice(sent.findIndex((s) => s.version === head) + 1);
      if (hotHead !== head && !after.some((s) => s.kind === 'replace' && s.outcome === 'lost' && s.version === hotHead))
        problems.push(`round ${round}: the hot file's head is ${hotHead}, neither its last accepted version ${head} nor a lost replace after it`);
      head = hotHead;
      // Every change in the log names a version that reads back.
      let changes = 0;
      for (let cursor = 0, more = true; more;) {
        const page = (await client.changes(drive, actor, cursor)).json() as { changes: Obj[]; cursor: number; more: boolean };
        for (const c of page.changes)
          if (typeof c.version === 'string' && (await client.node(drive, actor, String(c.node), `/versions/${c.version}`)).status !== 200)
            problems.push(`round ${round}: change ${String(c.seq)} names version ${c.version} of ${String(c.node)}, which does not read`);
        changes += page.changes.length;
        ({ cursor, more } = page);
      }
      return { problems, changes, visibleOfLost };
    };

    let n = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      killed = false;
      let accepted = 0;
      const killAfter = randomInt(20, 80);
      let kill!: () => void;
      const killNow = new Promise<void>((r) => (kill = r));
      // A few ms after the Nth 200, so the kill lands at any step of the commits in flight.
      const counted = () => void (++accepted === killAfter && setTimeout(kill, randomInt(0, 15)));
      const creator = async () => {
        while (!killed) {
          const i = n++;
          const keys = nodeKeys(undefined, true);
          const plaintext = new Uint8Array(randomBytes(randomInt(1, 3 * CHUNK_PLAIN)));
          const chunks = encryptContent(profile, drive, keys, plaintext, 1, CHUNK_PLAIN);
          // Every seventh create names chunks it never uploaded: refused (400), never visible.
          const bad = i % 7 === 6;
          try {
            if (!bad) await upload(chunks);
            const body = create(profile, { drive, author: owner, keys, kind: 'file', at: { folder: rootKeys, name: `f${i}` }, ownerEncryption: owner.encryption.publicKey, chunks });
            await commit({ kind: 'create', keys, version: String((body.manifest as Obj).version), chunks, plaintext, pages: body.pages as Obj[] }, body, bad, counted);
          } catch (error) {
            if (!killed) throw error;
          }
        }
      };
      // Replaces of the hot file on its head, one at a time; every fourth is on its first version: a 409.
      const replacer = async () => {
        for (let i = 0; !killed; i++) {
          const stale = i % 4 === 3;
          const plaintext = new Uint8Array(randomBytes(randomInt(1, 3 * CHUNK_PLAIN)));
          const chunks = encryptContent(profile, drive, hot, plaintext, 1, CHUNK_PLAIN);
          try {
            await upload(chunks);
            const body = replace(profile, { drive, author: owner, keys: hot, parent: stale ? hotFirst : head, chunks });
            const version = String((body.manifest as Obj).version);
            const entry = await commit({ kind: 'replace', keys: hot, version, chunks, plaintext, pages: body.pages as Obj[] }, body, stale, counted);
            if (entry.outcome === 'accepted') head = version;
          } catch (error) {
            if (!killed) throw error;
          }
        }
      };
      const load = Promise.all([replacer(), ...Array.from({ length: WORKERS }, creator)]);
      // A load that fails or ends fails the test rather than waiting for a kill that never comes.
      await Promise.race([killNow, load.then(() => Promise.reject(new Error('the load ended before the kill')))]);
      killed = true;
      relay.proc.kill('SIGKILL');
      await load;
      await client.http.close().catch(() => undefined);
      if (relay.proc.exitCode === null && relay.proc.signalCode === null) await new Promise((r) => relay.proc.once('exit', r));

      relay = await spawnReference('relay', relayArgs(port));
      children.push(relay);
      client = newClient();
      expect((await client.root(drive, actor)).status).toBe(200);
      const { problems, changes, visibleOfLost } = await verify(round);
      const count = (o: Sent['outcome']) => sent.filter((s) => s.outcome === o).length;
      console.log(
        `drive durability, round ${round} (killed ${killAfter} 200s in): ${count('accepted')} accepted, ${count('refused')} refused, ${count('lost')} lost-answer (${visibleOfLost} of them visible), ${changes} changes after restart`,
      );
      expect(problems).toEqual([]);
      expect(count('refused')).toBeGreaterThan(0);
    }
    await client.http.close().catch(() => undefined);
  }, 60_000);
});
