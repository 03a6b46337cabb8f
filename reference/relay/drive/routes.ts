// The drive's routes on the relay's app (document 3, Drive API; spec/http/relay.openapi.yaml tag
// `drive`), and the drive state one relay keeps: its tables in the relay's database, chunks under
// the data directory, in memory, or in S3-compatible object storage (--drive-s3), its event streams
// and link tokens.
import { join } from 'node:path';
import type { H3Event } from 'h3';
import { limits } from '../../../schemas/ts/limits.ts';
import type { Handler } from '../app.ts';
import type { RelayContext } from '../config.ts';
import type { OwnerCall } from '../inbox.ts';
import { LinkTokens, type Drive } from './access.ts';
import { FileChunks, MemoryChunks } from './chunks.ts';
import { DriveEvents } from './events.ts';
import * as h from './handlers.ts';
import { S3Chunks } from './s3-chunks.ts';
import { DriveStore } from './store.ts';

type Route = (path: string, methods: Record<string, Handler>) => void;
type Call = (req: Request, event: H3Event, max?: number, binary?: boolean) => Promise<OwnerCall>;

export function createDrive(ctx: RelayContext): Drive {
  const dir = ctx.config.dataDir;
  return {
    ctx,
    store: new DriveStore(ctx.store.sql),
    chunks: ctx.config.driveS3 ? new S3Chunks(ctx.config.driveS3) : dir === ':memory:' ? new MemoryChunks() : new FileChunks(join(dir, 'drive')),
    events: new DriveEvents(ctx.state, ctx.config.maxStreams, ctx.now),
    links: new LinkTokens(ctx.state),
    quota: ctx.config.driveQuota ?? limits.drive_quota_default_bytes,
  };
}

const MISSING_BODY_MAX = limits.drive_missing_max_chunks * 160;

export function driveRoutes(ctx: RelayContext, route: Route, call: Call, param: (event: H3Event, name: string) => string): Drive {
  const d = createDrive(ctx);
  const base = '/drive/:identity';
  const p = param;
  route(base, { GET: async (req, e) => h.root(d, await call(req, e)) });
  route(`${base}/chunks/missing`, { POST: async (req, e) => h.missing(d, await call(req, e, MISSING_BODY_MAX)) });
  route(`${base}/chunks/:hash`, { PUT: async (req, e) => h.putChunk(d, await call(req, e, limits.drive_chunk_max_bytes, true), p(e, 'hash')) });
  route(`${base}/commit`, { POST: async (req, e) => h.commit(d, await call(req, e, limits.drive_commit_body_max_bytes)) });
  route(`${base}/changes`, { GET: async (req, e) => h.changes(d, await call(req, e)) });
  route(`${base}/shares`, { GET: async (req, e) => h.shares(d, await call(req, e)) });
  route(`${base}/events`, { GET: async (req, e) => h.events(d, await call(req, e)) });
  route(`${base}/links/:link`, { GET: async (req, e) => h.link(d, p(e, 'identity'), p(e, 'link'), req) });
  route(`${base}/nodes/:node`, { GET: async (req, e) => h.node(d, await call(req, e), p(e, 'node')) });
  route(`${base}/nodes/:node/children`, { GET: async (req, e) => h.children(d, await call(req, e), p(e, 'node')) });
  route(`${base}/nodes/:node/history`, { GET: async (req, e) => h.history(d, await call(req, e), p(e, 'node')) });
  route(`${base}/nodes/:node/records`, { GET: async (req, e) => h.records(d, await call(req, e), p(e, 'node')) });
  route(`${base}/nodes/:node/shares`, { GET: async (req, e) => h.nodeShares(d, await call(req, e), p(e, 'node')) });
  route(`${base}/nodes/:node/chunks/:hash`, { GET: async (req, e) => h.chunk(d, await call(req, e), p(e, 'node'), undefined, p(e, 'hash')) });
  route(`${base}/nodes/:node/versions/:version`, { GET: async (req, e) => h.version(d, await call(req, e), p(e, 'node'), p(e, 'version')) });
  route(`${base}/nodes/:node/versions/:version/pages/:page`, { GET: async (req, e) => h.page(d, await call(req, e), p(e, 'node'), p(e, 'version'), p(e, 'page')) });
  route(`${base}/nodes/:node/versions/:version/chunks/:hash`, {
    GET: async (req, e) => h.chunk(d, await call(req, e), p(e, 'node'), p(e, 'version'), p(e, 'hash')),
  });
  ctx.closers.push(() => d.events.closeAll());
  if (d.chunks instanceof S3Chunks) {
    const chunks = d.chunks;
    // Upload URLs that lapsed are settled: what arrived through them is verified and counted.
    const sweeper = setInterval(() => void h.settleLapsed(d).catch((error: unknown) => ctx.log(`drive: settling lapsed uploads failed: ${(error as Error).message}`, 'error')), 30_000);
    sweeper.unref();
    ctx.closers.push(() => {
      clearInterval(sweeper);
      chunks.close();
    });
  }
  return d;
}
