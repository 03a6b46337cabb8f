// The keystore (document 3, Keystore): wrapped copies of an identity's master seed, one per
// enrolled authenticator, ciphertext the relay cannot open. Writes carry the identity key's admin
// envelope; the read is a WebAuthn assertion alone (protocol/relay/webauthn.ts). `wrapped` is
// kept as the JSON text that was sent: its digest is signed, so it is never re-serialized.
import { createHash } from 'node:crypto';
import { findNodeAtLocation, parseTree } from 'jsonc-parser';
import { decodeBase64Any, encodeBase64url } from '../../protocol/common/base64.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { acceptableRpIds as rpIdsOf } from '../../protocol/relay/rp-id.ts';
import { challengeCandidates, checkAssertion, COSE_ALGS, credentialKey, readAssertion, type Assertion } from '../../protocol/relay/webauthn.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import type { RelayContext } from './config.ts';
import { lookup, type Known, type DirectoryContext } from './directory.ts';
import { hostedParent, object } from './identities.ts';
import type { EnrollmentRow } from './store.ts';

/** What this module uses of the relay's context. */
export type KeystoreContext = Pick<RelayContext, 'auth' | 'now' | 'store'> & DirectoryContext;

const KINDS: ReadonlySet<string> = new Set(vocabulary.keystore_kinds.values);
const WRAPS: ReadonlySet<string> = new Set(vocabulary.keystore_wraps.values);
const ROLES: ReadonlySet<string> = new Set(vocabulary.keystore_roles.values);
const ENROLLMENT_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Whether `v` is one of `values` (a value of another type is none of them). */
const oneOf = (values: ReadonlySet<string>, v: unknown): v is string => values.has(v as string);

/** The one answer to a refused fetch: the same bytes whatever failed (ra.keystore.fetch-indistinct). */
const refused = () => new HttpError(401, 'not_authorized', 'the assertion is not accepted', 'ra.errors.keystore-unauthorized');
const shape = (detail: string) => new HttpError(400, 'invalid_request', detail, 'ra.keystore.enrollment-shape');

async function hosted(ctx: KeystoreContext, raw: string): Promise<Known> {
  const known = await lookup(ctx, raw);
  if (!known?.local) throw ruleError(404, 'ra.errors.not-found', `${raw} is not hosted here`);
  return known;
}

/** The RP ids an assertion may name: the identity, or its registrable domain (public suffix list) when hosted. */
export function acceptableRpIds(ctx: KeystoreContext, identity: string): string[] {
  return rpIdsOf(identity, hostedParent(ctx, identity) !== undefined);
}

/**
 * The RP ids to try for a body's `rp_id`: the one named when it is acceptable, every acceptable one
 * when it is absent (document 3 lists rp_id without requiring it), none otherwise.
 */
function rpIdsFor(ctx: KeystoreContext, identity: string, rpId: unknown): string[] {
  const acceptable = acceptableRpIds(ctx, identity);
  if (rpId === undefined || rpId === null) return acceptable;
  return typeof rpId === 'string' && acceptable.includes(rpId) ? [rpId] : [];
}

/**
 * The text of the body's top-level `wrapped` member exactly as sent (400 when absent or repeated).
 * `text` is a JSON object already parsed (object()), so its tree and members are there.
 */
function wrappedAsSent(text: string): string {
  const root = parseTree(text)!;
  const members = root.children!.filter((p) => p.children![0]!.value === 'wrapped');
  if (members.length !== 1) throw shape('wrapped is required, once');
  const node = findNodeAtLocation(root, ['wrapped'])!;
  if (node.type !== 'object') throw shape('wrapped is an object');
  return text.slice(node.offset, node.offset + node.length);
}

const optionalString = (v: unknown, name: string): string | null => {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw shape(`${name} is a string`);
  return v;
};

/** The enrollment of a PUT body, checked against the document's values and the project's limits. */
function enrollment(identity: string, b: Record<string, unknown>, wrapped: string, now: number): Omit<EnrollmentRow, 'last_used_at'> {
  const id = b.enrollment_id;
  if (typeof id !== 'string' || !ENROLLMENT_ID.test(id) || id === 'list' || id === 'fetch') throw shape('enrollment_id is 1 to 64 characters of A-Z a-z 0-9 _ -, other than list and fetch');
  if (!oneOf(KINDS, b.kind)) throw shape(`kind is one of ${[...KINDS].join(', ')}`);
  if (!oneOf(WRAPS, b.wrap)) throw shape(`wrap is one of ${[...WRAPS].join(', ')}`);
  const role = b.role ?? 'device';
  if (!oneOf(ROLES, role)) throw shape(`role is one of ${[...ROLES].join(', ')}`);
  if (Buffer.byteLength(wrapped) > limits.keystore_wrapped_max_bytes) throw shape(`wrapped is at most ${limits.keystore_wrapped_max_bytes} bytes`);
  const label = optionalString(b.label, 'label');
  if (label !== null && Buffer.byteLength(label) > limits.keystore_label_max_bytes) throw shape(`label is at most ${limits.keystore_label_max_bytes} bytes`);
  const credentialId = optionalString(b.credential_id, 'credential_id');
  const publicKey = optionalString(b.credential_public_key, 'credential_public_key');
  if ((credentialId === null) !== (publicKey === null)) throw new HttpError(400, 'invalid_request', 'credential_id and credential_public_key are supplied together', 'ra.keystore.enroll');
  let alg: number | null = null;
  if (credentialId !== null) {
    const raw = decodeBase64Any(credentialId);
    if (!raw || raw.length === 0 || raw.length > limits.keystore_credential_id_max_bytes) throw shape(`credential_id is base64url of 1 to ${limits.keystore_credential_id_max_bytes} bytes`);
    // Left out, it is ES256's (the project's default); credentialKey knows only the table's integers.
    alg = (b.credential_alg ?? -7) as number;
    if (!credentialKey(publicKey!, alg)) throw shape(`credential_public_key is an SPKI key of credential_alg, one of ${COSE_ALGS.join(', ')}`);
  }
  return { identity, enrollment_id: id, kind: b.kind, wrap: b.wrap, wrapped, credential_id: credentialId, credential_public_key: publicKey, credential_alg: alg, label, role, created_at: now };
}

/** PUT /identities/:identity/keystore (ra.keystore.enroll, ra.signing.keystore-enroll). */
export async function enroll(ctx: KeystoreContext, raw: string, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const known = await hosted(ctx, raw);
  const b = object(bytes);
  // object() has refused a body that is not UTF-8; a leading BOM is dropped as object() drops it.
  const wrapped = wrappedAsSent(new TextDecoder().decode(bytes));
  const row = enrollment(known.identity, b, wrapped, ctx.now());
  const wrapped_digest = encodeBase64url(createHash('sha256').update(wrapped).digest());
  await ctx.auth.admin('keystore-enroll', { identity: known.identity, enrollment_id: row.enrollment_id, kind: row.kind, credential_id: row.credential_id ?? undefined, wrapped_digest }, b, known.keys);
  if (!(await ctx.store.putEnrollment(row, limits.keystore_enrollments_max))) throw shape(`an identity holds at most ${limits.keystore_enrollments_max} enrollments`);
  return { enrollment_id: row.enrollment_id, created_at: formatRfc3339(row.created_at) };
}

/** POST .../keystore/list (ra.keystore.list): metadata only. */
export async function listKeystore(ctx: KeystoreContext, raw: string, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const known = await hosted(ctx, raw);
  await ctx.auth.admin('keystore-list', { identity: known.identity }, object(bytes), known.keys);
  return {
    identity: known.identity,
    enrollments: (await ctx.store.enrollments(known.identity)).map((e) => ({
      enrollment_id: e.enrollment_id,
      kind: e.kind,
      wrap: e.wrap,
      label: e.label,
      role: e.role,
      has_passkey: e.credential_id !== null,
      created_at: formatRfc3339(e.created_at),
      last_used_at: e.last_used_at === null ? null : formatRfc3339(e.last_used_at),
    })),
  };
}

/**
 * The enrollment whose credential signed `a` for `identity` at one of the RP ids `rpId` allows, or
 * undefined (the challenge is spent once tried). The challenge may come in either form
 * challengeCandidates reads. Neither clientDataJSON's origin nor the signature counter is checked:
 * see docs/decisions.md (WebAuthn: origin and signCount).
 */
async function asserted(ctx: KeystoreContext, identity: string, a: Assertion | undefined, rpId: unknown, among: readonly EnrollmentRow[]): Promise<EnrollmentRow | undefined> {
  const rpIds = rpIdsFor(ctx, identity, rpId);
  if (!a) return undefined;
  // readAssertion gave a string credential_id, which a passkey-less enrollment's null never equals.
  const row = among.find((e) => e.credential_id === a.credential_id);
  const key = row && credentialKey(row.credential_public_key!, row.credential_alg!);
  if (!key) return undefined;
  const expected = { rpIds, key, alg: row!.credential_alg! };
  // Spending the challenge is a step of the (possibly shared) state, so it cannot run inside the
  // pure check: a first pass names the challenge only when every check before it passed, the
  // challenge is claimed, and a second pass checks the rest.
  let named: string | undefined;
  checkAssertion(a, { ...expected, challengeOk: (c) => ((named = c), false) });
  if (named === undefined) return undefined;
  for (const challenge of challengeCandidates(named)) if (await ctx.auth.takeChallenge(identity, challenge)) return checkAssertion(a, { ...expected, challengeOk: () => true }).ok ? row : undefined;
  return undefined;
}

/** POST .../keystore/fetch (ra.keystore.fetch): the asserted credential's wrapped copies. */
export async function fetchKeystore(ctx: KeystoreContext, raw: string, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const known = await hosted(ctx, raw);
  const b = object(bytes);
  const row = await asserted(ctx, known.identity, readAssertion(b.assertion), b.rp_id, await ctx.store.enrollments(known.identity));
  if (!row) throw refused();
  await ctx.store.enrollmentUsed(known.identity, row.enrollment_id, ctx.now());
  const entries = (await ctx.store.enrollments(known.identity)).filter((e) => e.credential_id === row.credential_id);
  return {
    identity: known.identity,
    // `wrapped` goes out as the text it came in (RawJson-free: parsed back, it is the same value).
    entries: entries.map((e) => ({
      enrollment_id: e.enrollment_id,
      kind: e.kind,
      wrap: e.wrap,
      wrapped: JSON.parse(e.wrapped) as unknown,
      label: e.label,
      role: e.role,
      created_at: formatRfc3339(e.created_at),
    })),
  };
}

/** DELETE .../keystore/:enrollment (ra.keystore.remove, ra.keystore.recovery-master, ra.keystore.last-enrollment). */
export async function removeEnrollment(ctx: KeystoreContext, raw: string, enrollmentId: string, bytes: Uint8Array): Promise<Record<string, unknown> | undefined> {
  const known = await hosted(ctx, raw);
  const b = object(bytes);
  await ctx.auth.admin('keystore-remove', { identity: known.identity, enrollment_id: enrollmentId }, b, known.keys);
  const all = await ctx.store.enrollments(known.identity);
  if (!all.some((e) => e.enrollment_id === enrollmentId)) throw ruleError(404, 'ra.errors.not-found', 'no such enrollment of this identity');
  const masters = all.filter((e) => e.role === 'recovery-master');
  if (masters.length > 0 && !(await asserted(ctx, known.identity, readAssertion(b.actor_assertion), b.rp_id, masters)))
    throw new HttpError(403, 'recovery_master_required', 'this identity has a recovery master: a removal needs its actor_assertion', 'ra.errors.recovery-master-required');
  const outcome = await ctx.store.removeEnrollment(known.identity, enrollmentId, b.allow_last === true);
  if (outcome === 'missing') throw ruleError(404, 'ra.errors.not-found', 'no such enrollment of this identity');
  if (outcome === 'last') throw ruleError(409, 'ra.keystore.last-enrollment', 'this is the last enrollment: send allow_last to remove it');
  if (b.revoke_sessions !== true) return undefined;
  const ended = await ctx.auth.endSessions(known.identity);
  // Remembered until they would have expired, so their proofs are refused too (ra.sessions.revoked-stays-revoked).
  for (const s of ended) await ctx.store.revokeSession(encodeBase64url(s.key), s.identity, s.expiresAt);
  return { enrollment_id: enrollmentId, sessions_revoked: ended.length };
}
