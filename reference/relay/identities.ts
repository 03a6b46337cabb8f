// Identities: registration (hosted, or DNS through a provider), lookup, the Host-routed well-known
// documents, availability of hosted handles, rotation and export.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { create } from 'tar';
import { decodeBase64Any } from '../../protocol/common/base64.ts';
import { canonicalString } from '../../protocol/common/canonical.ts';
import { previousKeys, verifyDocument } from '../../protocol/common/document.ts';
import { verifyEd25519Async } from '../../protocol/common/ed25519.ts';
import { parseKey } from '../../protocol/common/keys.ts';
import { defaultHostedPolicy, hostedReason, validServiceName } from '../../protocol/common/names.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import type { RelayContext } from './config.ts';
import { lookup, type DirectoryContext } from './directory.ts';
import type { IdentityRow } from './store.ts';
import { systemDocument, systemDocuments } from './system-files.ts';
import { DnsWriteError, recordsFor } from './dns-providers.ts';
import { asObject, parseJson } from '../shared/json.ts';

/** What this module uses of the relay's context. */
export type IdentitiesContext = Pick<RelayContext, 'auth' | 'config' | 'dns' | 'log' | 'now' | 'rate' | 'store'> & DirectoryContext;

/** The body as a JSON object, or 400 invalid_request. */
export const object = (bytes: Uint8Array): Record<string, unknown> => {
  const parsed = parseJson(bytes);
  if (!parsed.ok) throw ruleError(400, 'ra.errors.invalid-request', 'the body is not JSON');
  const body = asObject(parsed.value);
  if (!body) throw ruleError(400, 'ra.errors.invalid-request', 'the body is not a JSON object');
  return body;
};

export const hostedParent = (ctx: Pick<RelayContext, 'config'>, identity: string): string | undefined =>
  ctx.config.hostedDomains.find((d) => identity.endsWith(`.${d}`) && !identity.slice(0, -d.length - 1).includes('.'));

export async function register(ctx: IdentitiesContext, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const b = object(bytes);
  const identity = validServiceName(b.identity);
  if (identity === undefined) throw ruleError(400, 'ra.names.valid', 'identity is not a valid service name');
  const key = parseKey(b.public_key, 'signing');
  if (!key) throw ruleError(400, 'ra.errors.invalid-request', 'public_key is not a base64url Ed25519 key');
  const enc = b.encryption_public_key === undefined || b.encryption_public_key === null ? undefined : b.encryption_public_key;
  if (enc !== undefined && !parseKey(enc, 'encryption')) throw ruleError(400, 'ra.errors.invalid-request', 'encryption_public_key is not a base64url X25519 key');
  const dnsMode = b.dns_provider !== undefined || b.dns_token !== undefined;
  if (dnsMode && (typeof b.dns_provider !== 'string' || typeof b.dns_token !== 'string' || !ctx.dns.get(b.dns_provider))) {
    throw ruleError(400, 'ra.errors.invalid-request', `dns_provider must be one of ${ctx.dns.names().join(', ')}, with dns_token (ra.identities.dns-provider)`);
  }
  if (!dnsMode && !hostedParent(ctx, identity))
    throw ruleError(400, 'ra.errors.invalid-request', `a hosted identity is one label under ${ctx.config.hostedDomains.join(', ') || '(no hosted domain)'} (ra.identities.hosted)`);
  // A hosted handle must pass the policy availability states (reserved, blocked, lengths, charset).
  const policyReason = dnsMode ? 'available' : hostedReason(identity, ctx.config.profile, policyOf(ctx));
  if (policyReason !== 'available' && !(await ctx.store.identity(identity))) {
    throw ruleError(400, 'ra.errors.name-unavailable', `${identity} cannot be registered: ${MESSAGES[policyReason] ?? policyReason}`).withBody({ reason: policyReason });
  }
  const doc = b.identity_document;
  const needsDoc = !dnsMode || ctx.config.dataConfigured;
  if (needsDoc || doc !== undefined) {
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw ruleError(400, 'ra.errors.invalid-request', 'a signed identity_document is required (ra.identities.hosted)');
    const d = doc as Record<string, unknown>;
    if (validServiceName(d.identity) !== identity || parseKey(d.public_key, 'signing') === undefined || !Buffer.from(parseKey(d.public_key, 'signing')!).equals(key)) {
      throw ruleError(400, 'ra.errors.invalid-request', 'identity_document names another identity or key');
    }
    const check = verifyDocument(d);
    if (!check.ok) throw ruleError(400, 'ra.errors.invalid-request', `identity_document: ${check.reason}`);
  }
  await ctx.auth.admin('identity-registration', { identity, public_key: b.public_key, encryption_public_key: enc ?? '', relay_address: ctx.config.relayAddress }, b, [key]);
  if (!dnsMode && ctx.config.registrationGate === 'invite' && !(typeof b.invite_code === 'string' && ctx.config.inviteCodes.includes(b.invite_code))) {
    throw ruleError(403, 'ra.errors.invite-required', 'this relay registers hosted identities by invite: a valid invite_code is required');
  }
  if (await ctx.store.identity(identity)) throw ruleError(409, 'ra.errors.already-registered', `${identity} is already registered here`);
  if (dnsMode) {
    const provider = ctx.dns.get(b.dns_provider as string)!;
    try {
      await provider.write(recordsFor(ctx.config.profile.ids, identity, b.public_key as string, enc as string | undefined, ctx.config.relayAddress.replace(/:\d+$/, '')), b.dns_token as string);
    } catch (error) {
      const detail = error instanceof DnsWriteError ? error.message : 'the DNS provider failed';
      throw ruleError(502, 'ra.identities.dns-mode', detail);
    }
  }
  const created = ctx.now();
  const added = await ctx.store.addIdentity({
    identity,
    public_key: b.public_key as string,
    encryption_public_key: (enc as string | undefined) ?? null,
    document: JSON.stringify(doc ?? { version: 1, identity, public_key: b.public_key }),
    created_at: created,
  });
  if (!added) throw ruleError(409, 'ra.errors.already-registered', `${identity} is already registered here`);
  ctx.log(`registered ${identity} (${dnsMode ? `dns: ${String(b.dns_provider)}` : 'hosted'})`);
  return { identity, public_key: b.public_key, encryption_public_key: enc ?? null, relay: ctx.config.relayAddress, created_at: formatRfc3339(created) };
}

export async function identityInfo(ctx: IdentitiesContext, raw: string): Promise<Record<string, unknown>> {
  const row = validServiceName(raw) && (await ctx.store.identity(validServiceName(raw)!));
  if (!row) throw ruleError(404, 'ra.errors.not-found', `${raw} is not hosted here`);
  return { identity: row.identity, public_key: row.public_key, ...(row.encryption_public_key ? { encryption_public_key: row.encryption_public_key } : {}), relay: ctx.config.relayAddress };
}

/** The stored document of the identity the Host header names. */
export async function wellKnownDocument(ctx: IdentitiesContext, host: string | null): Promise<Record<string, unknown>> {
  const row = await identityOfHost(ctx, host);
  return JSON.parse(row.document) as Record<string, unknown>;
}

export async function capabilities(ctx: IdentitiesContext, host: string | null): Promise<Record<string, unknown>> {
  const row = await identityOfHost(ctx, host);
  const doc = JSON.parse(row.document) as Record<string, unknown>;
  // The owner's public/capabilities.json (System files) when written, else what the document carries.
  const own =
    (await systemDocument(ctx, row.identity, 'public/capabilities.json')) ?? (doc.capabilities !== null && typeof doc.capabilities === 'object' ? (doc.capabilities as Record<string, unknown>) : {});
  const endpoints = { ...((own.endpoints as Record<string, unknown> | undefined) ?? {}) };
  if (ctx.config.webStaticDir && endpoints.web_signer === undefined) endpoints.web_signer = `https://${row.identity}/app/`;
  if (ctx.config.oauthBridgeUrl && endpoints.oauth_bridge === undefined) endpoints.oauth_bridge = ctx.config.oauthBridgeUrl;
  return { ...own, endpoints };
}

/** GET <public files>/<name> (Host-routed): the owner's public document as written (profile.json, group-roster.json). */
export async function publicDocument(ctx: IdentitiesContext, host: string | null, name: string): Promise<Record<string, unknown>> {
  const row = await identityOfHost(ctx, host);
  const doc = /^[a-z0-9-]+\.json$/.test(name) ? await systemDocument(ctx, row.identity, `public/${name}`) : undefined;
  if (!doc) throw ruleError(404, 'ra.errors.not-found', `${row.identity} has written no public ${name}`);
  return doc;
}

export async function identityOfHost(ctx: IdentitiesContext, host: string | null): Promise<IdentityRow> {
  const name = validServiceName((host ?? '').replace(/:\d+$/, ''));
  const row = name ? await ctx.store.identity(name) : undefined;
  if (!row) throw ruleError(404, 'ra.errors.not-found', 'no identity is hosted here under this Host');
  return row;
}

/** The hosted-handle policy with this relay's blocked terms. */
const policyOf = (ctx: IdentitiesContext) => ({ ...defaultHostedPolicy, blocked: ctx.config.blockedTerms ?? [] });

const MESSAGES: Record<string, string> = {
  available: 'This name is available.',
  taken: 'This name is already registered.',
  reserved: 'This name is reserved.',
  blocked: 'This name is not allowed.',
  too_short: `Names have at least ${defaultHostedPolicy.minLen} characters.`,
  too_long: `Names have at most ${defaultHostedPolicy.maxLen} characters.`,
  charset: 'Names use a-z, 0-9 and hyphens.',
  hyphen: 'A name does not start or end with a hyphen, nor have two in a row.',
  punycode: 'Names do not start with xn--.',
  domain_not_hosted: 'This relay does not host that domain.',
};

export async function availability(ctx: IdentitiesContext, url: URL, ip: string): Promise<Record<string, unknown>> {
  const handle = url.searchParams.get('handle');
  if (handle === null || handle === '') throw ruleError(400, 'ra.errors.invalid-request', 'handle is required (ra.availability)');
  await ctx.rate.charge([['ip', ip]], limits.availability_charge_units);
  const domain = (url.searchParams.get('domain') ?? ctx.config.hostedDomains[0] ?? '').toLowerCase();
  const h = handle.trim().toLowerCase();
  const identity = `${h}.${domain}`;
  let reason: string;
  if (!ctx.config.hostedDomains.includes(domain)) reason = 'domain_not_hosted';
  else if (validServiceName(identity) && (await ctx.store.identity(validServiceName(identity)!))) reason = 'taken';
  else {
    const r = h.includes('.') ? 'charset' : hostedReason(identity, ctx.config.profile, policyOf(ctx)); // the handle is one label (ra.availability)
    reason = r === 'invalid' ? 'charset' : r;
  }
  const policy = { min_len: defaultHostedPolicy.minLen, max_len: defaultHostedPolicy.maxLen, charset: 'a-z0-9-' };
  return { handle: h, identity, available: reason === 'available', reason, message: MESSAGES[reason] ?? reason, policy };
}

export async function rotate(ctx: IdentitiesContext, raw: string, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const row = validServiceName(raw) && (await ctx.store.identity(validServiceName(raw)!));
  if (!row) throw ruleError(404, 'ra.errors.not-found', `${raw} is not hosted here`);
  const b = object(bytes);
  const newKey = parseKey(b.new_public_key, 'signing');
  const doc = b.identity_document;
  if (!newKey || doc === null || typeof doc !== 'object' || Array.isArray(doc) || typeof b.rotation_signature !== 'string' || typeof b.issued_at !== 'string' || typeof b.nonce !== 'string') {
    throw ruleError(400, 'ra.errors.invalid-request', 'identity_document, new_public_key, rotation_signature, issued_at and nonce are required (ra.identities.rotate)');
  }
  const d = doc as Record<string, unknown>;
  const check = verifyDocument(d);
  const docKey = parseKey(d.public_key, 'signing');
  const oldKeyBytes = Buffer.from(parseKey(row.public_key, 'signing')!);
  const lists = previousKeys(d).some((p) => oldKeyBytes.equals(p.publicKey));
  if (!check.ok || !docKey || !Buffer.from(docKey).equals(newKey) || validServiceName(d.identity) !== row.identity || !lists) {
    throw new HttpError(400, 'invalid_request', 'the new document must be signed by the new key, name this identity and list the old key in previous_keys', 'ra.identities.rotate');
  }
  const oldKey = parseKey(row.public_key, 'signing')!;
  const message = canonicalString(ctx.config.profile, 'identity-rotation', {
    identity: row.identity,
    old_public_key: row.public_key,
    new_public_key: b.new_public_key,
    issued_at: b.issued_at,
    nonce: b.nonce,
  });
  const sig = decodeBase64Any(b.rotation_signature);
  if (!sig || sig.length !== 64 || !(await verifyEd25519Async(oldKey, message, sig)))
    throw ruleError(401, 'ra.errors.signature-invalid', 'rotation_signature is not the old key signing the identity-rotation lines');
  await ctx.store.updateIdentity({
    identity: row.identity,
    public_key: b.new_public_key as string,
    encryption_public_key: typeof d.encryption_public_key === 'string' ? d.encryption_public_key : row.encryption_public_key,
    document: JSON.stringify(d),
  });
  return d;
}

export async function exportIdentity(ctx: IdentitiesContext, raw: string, bytes: Uint8Array): Promise<Response> {
  const known = await lookup(ctx, raw);
  const row = known && (await ctx.store.identity(known.identity));
  if (!known || !row) throw ruleError(404, 'ra.errors.not-found', `${raw} is not hosted here`);
  const b = object(bytes);
  await ctx.auth.admin('identity-export', { identity: known.identity }, b, known.keys);
  const dir = ctx.config.profile.ids.system_dir;
  const files: Array<[string, string]> = [
    ['id.json', `${JSON.stringify(JSON.parse(row.document), null, 2)}\n`],
    [`${dir}/public/id.json`, `${JSON.stringify(JSON.parse(row.document), null, 2)}\n`],
    // The owner's system documents and the relay-written zone (ra.system.relay-written).
    ...(await systemDocuments(ctx, known.identity)).map(([path, body]): [string, string] => [`${dir}/${path}`, body]),
  ];
  // The archive is written by the tar package from a scratch directory (never hand-rolled).
  const scratch = await mkdtemp(join(tmpdir(), 'svc-relay-export-'));
  const chunks: Buffer[] = [];
  try {
    for (const [path, content] of files) {
      await mkdir(dirname(join(scratch, path)), { recursive: true });
      await writeFile(join(scratch, path), content);
    }
    for await (const c of create(
      { gzip: true, cwd: scratch, portable: true },
      files.map(([p]) => p),
    ) as unknown as AsyncIterable<Buffer>)
      chunks.push(c);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return new Response(Buffer.concat(chunks), { status: 200, headers: { 'content-type': 'application/gzip', 'content-disposition': `attachment; filename="${known.identity}.tar.gz"` } });
}
