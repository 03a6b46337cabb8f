// The drive's routes on the relay's app (document 3, Drive API; spec/http/relay.openapi.yaml tag
// `drive`), and the drive state one relay keeps: its tables in the relay's database, chunks under
// the data directory, in memory, or in S3-compatible object storage (--drive-s3), its event streams
// and link tokens.
import { join } from 'node:path';
import { limits } from '../../../schemas/ts/limits.ts';
import type { paths } from '../../../schemas/ts/http/relay.ts';
import type { Route, WebCall } from '../../shared/routes.ts';
import type { RelayContext } from '../config.ts';
import type { OwnerCall } from '../inbox.ts';
import { LinkTokens, type Drive } from './access.ts';
import { FileChunks, MemoryChunks } from './chunks.ts';
import { DriveEvents } from './events.ts';
import * as h from './handlers.ts';
import { S3Chunks } from './s3-chunks.ts';
import { DriveStore } from './store.ts';

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

/** The drive's routes on the relay's route layer (each a signed request of the drive's owner, but a link). */
export function driveRoutes(ctx: RelayContext, owner: (c: WebCall) => OwnerCall): Array<Route<paths>> {
  const d = createDrive(ctx);
  const o = owner;
  const auth = 'signed-request' as const;
  const routes: Array<Route<paths>> = [
    { op: 'GET /drive/{identity}', auth, handle: async (c) => h.root(d, o(c)) },
    { op: 'POST /drive/{identity}/chunks/missing', body: { max: MISSING_BODY_MAX }, auth, handle: async (c) => h.missing(d, o(c)) },
    { op: 'PUT /drive/{identity}/chunks/{hash}', body: { max: limits.drive_chunk_max_bytes, binary: true }, auth, handle: async (c) => h.putChunk(d, o(c), c.param('hash')) },
    { op: 'POST /drive/{identity}/commit', body: { max: limits.drive_commit_body_max_bytes }, auth, handle: async (c) => h.commit(d, o(c)) },
    { op: 'GET /drive/{identity}/changes', auth, handle: async (c) => h.changes(d, o(c)) },
    { op: 'GET /drive/{identity}/shares', auth, handle: async (c) => h.shares(d, o(c)) },
    { op: 'GET /drive/{identity}/events', auth, handle: async (c) => h.events(d, o(c)) },
    { op: 'GET /drive/{identity}/links/{link}', auth: 'link', handle: async (c) => h.link(d, c.param('identity'), c.param('link'), c.req) },
    { op: 'GET /drive/{identity}/nodes/{node}', auth, handle: async (c) => h.node(d, o(c), c.param('node')) },
    { op: 'GET /drive/{identity}/nodes/{node}/children', auth, handle: async (c) => h.children(d, o(c), c.param('node')) },
    { op: 'GET /drive/{identity}/nodes/{node}/history', auth, handle: async (c) => h.history(d, o(c), c.param('node')) },
    { op: 'GET /drive/{identity}/nodes/{node}/records', auth, handle: async (c) => h.records(d, o(c), c.param('node')) },
    { op: 'GET /drive/{identity}/nodes/{node}/shares', auth, handle: async (c) => h.nodeShares(d, o(c), c.param('node')) },
    { op: 'GET /drive/{identity}/nodes/{node}/chunks/{hash}', auth, handle: async (c) => h.chunk(d, o(c), c.param('node'), undefined, c.param('hash')) },
    { op: 'GET /drive/{identity}/nodes/{node}/versions/{version}', auth, handle: async (c) => h.version(d, o(c), c.param('node'), c.param('version')) },
    { op: 'GET /drive/{identity}/nodes/{node}/versions/{version}/pages/{page}', auth, handle: async (c) => h.page(d, o(c), c.param('node'), c.param('version'), c.param('page')) },
    { op: 'GET /drive/{identity}/nodes/{node}/versions/{version}/chunks/{hash}', auth, handle: async (c) => h.chunk(d, o(c), c.param('node'), c.param('version'), c.param('hash')) },
  ];
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
  return routes;
}
