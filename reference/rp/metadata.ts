// GET /.well-known/<name>.json: the RP metadata document in the hardened posture (it publishes
// `response_uris`); every URI on this origin; never a redirect; far under the 16 KiB cap.
import { limits } from '../../schemas/ts/limits.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { json } from '../shared/http.ts';
import { url, type RpContext } from './config.ts';

export function metadataDocument(ctx: RpContext): Record<string, unknown> {
  const host = new URL(ctx.config.origin).hostname;
  return {
    [ctx.profile.ids.auth_field]: '1',
    origin: ctx.config.origin,
    name: ctx.config.name,
    response_uris: [url(ctx, ctx.paths.response)],
    poll_uri: url(ctx, ctx.paths.poll),
    context_uri: url(ctx, ctx.paths.context),
    scopes: [...vocabulary.scopes.values],
    transports: [...vocabulary.transports.values],
    contact_uri: ctx.config.contactUri ?? `mailto:abuse@${host}`,
  };
}

export function metadataHandler(ctx: RpContext): () => Response {
  const body = metadataDocument(ctx);
  const size = Buffer.byteLength(JSON.stringify(body));
  if (size > limits.metadata_body_max_bytes) throw new Error(`metadata is ${size} bytes, over ${limits.metadata_body_max_bytes}`);
  return () => json(body, 200, { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' });
}
