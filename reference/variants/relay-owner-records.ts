// The owner's records broken on the wire (blind broken servers of issue 25, written without the
// suites): a device row's name forgotten by a session that omits it, and an export without the
// identity's `.svc/relay` documents.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { c as tarCreate, t as tarList, x as tarExtract } from 'tar';
import { profileFor } from '../../protocol/common/profile.ts';
import { buffered, withBody, type Wire, type WireVariant } from './kit.ts';

const ids = profileFor().ids;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const jsonOf = async (res: Response): Promise<Record<string, unknown>> =>
  (await res
    .clone()
    .json()
    .catch(() => ({}))) as Record<string, unknown>;

/** An export archive (tar.gz) without its `.svc/relay` documents. */
async function withoutRelayZone(gz: Uint8Array): Promise<ArrayBuffer> {
  const dir = await mkdtemp(join(tmpdir(), 'variant-export-'));
  try {
    const file = join(dir, 'in.tar.gz');
    const root = join(dir, 'tree');
    await writeFile(file, gz);
    await mkdir(root);
    const kept: string[] = [];
    await tarList({ file, onReadEntry: (e) => void (e.type === 'File' && !e.path.includes(`${ids.system_dir}/relay/`) && kept.push(e.path)) });
    await tarExtract({ file, cwd: root });
    const out = join(dir, 'out.tar.gz');
    await tarCreate({ gzip: true, file: out, cwd: root, portable: true }, kept);
    const b = await readFile(out);
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A blind broken server (owner-09, written without the suites): "the device name is overwritten
 * instead of kept when a later request leaves it out". The wire sees each session's install and
 * name headers, and lists the row of an install whose last session sent no name with none.
 */
function deviceNameForgotten(): Wire {
  const nameless = new Set<string>();
  return async (original, next) => {
    const url = new URL(original.url);
    if (original.method === 'POST' && url.pathname === '/sessions') {
      const install = original.headers.get(ids.header_device);
      const { req, body } = await buffered(original);
      const res = await next(req);
      if (install && res.status === 201) {
        // The row id as the relay forms it: a hash of the identity and the install.
        const id = `dev_${createHash('sha256')
          .update(`${str(body.identity)}\n${install}`)
          .digest('hex')
          .slice(0, 32)}`;
        if (original.headers.has(ids.header_device_name)) nameless.delete(id);
        else nameless.add(id);
      }
      return res;
    }
    const res = await next(original);
    if (original.method !== 'GET' || !/^\/devices\/[^/]+$/.test(url.pathname) || res.status !== 200) return res;
    const b = await jsonOf(res);
    const key = Array.isArray(b.devices) ? 'devices' : Array.isArray(b.items) ? 'items' : undefined;
    if (!key) return res;
    const rows = b[key] as Array<Record<string, unknown>>;
    return withBody(res, JSON.stringify({ ...b, [key]: rows.map((r) => (nameless.has(str(r.id)) ? { ...r, name: null } : r)) }));
  };
}

export const RELAY_OWNER_RECORDS_WIRE: Record<string, WireVariant> = {
  'owner-device-name-forgotten': {
    rule: 'ra.devices.rows',
    what: "a session that omits X-Svc-Device-Name sets the device row's name to null",
    wire: deviceNameForgotten(),
  },
  // A blind broken server (owner-08, written without the suites): "the export keeps only `public/` system documents".
  'owner-export-public-only': {
    rule: 'ra.identities.export',
    what: 'the export archive leaves out the .svc/relay documents',
    wire: async (req, next) => {
      const res = await next(req);
      if (req.method !== 'POST' || !/^\/identities\/[^/]+\/export$/.test(new URL(req.url).pathname) || res.status !== 200) return res;
      return withBody(res, await withoutRelayZone(new Uint8Array(await res.arrayBuffer())));
    },
  },
};
