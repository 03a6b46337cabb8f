// The relay's front doors for the fuzz (harness/fuzz): owner-only operations get a signed request
// over the exact bytes sent (so a mutated body still reaches the operation), envelopes are signed
// before their unsigned extras are mutated, registrations and sessions carry valid admin
// envelopes, keystore writes their signed envelopes and the keystore fetch a fresh assertion of the
// fuzzer's passkey, pairing calls the approver's signed envelope or the new device's claim token.
// Kept while fuzzing: a message to an identity the fuzz never touches.
import { createHash, randomBytes } from 'node:crypto';
import { limits } from '../../../../schemas/ts/limits.ts';
import { fuzzChecks, type FrontDoor } from '../../../fuzz/check.ts';
import type { Draft } from '../../../fuzz/mutations.ts';
import { loadOperations, specFile, type Operation } from '../../../fuzz/operations.ts';
import { ack, adminEnvelope, newRelayIdentity, registration, sessionRegistration, signedRequestHeaders, SoftwareAuthenticator, type RelayIdentity } from '../../../actors/relay/index.ts';
import type { Check } from '../../../run/model.ts';
import { pairingCommitment } from '../../../../protocol/common/canonical.ts';
import { Session, pickupOf, said, inviteOf, type RelayTarget } from '../driver.ts';
import { failedAckWithin, mail } from './messaging.ts';
import { HttpClient } from '../../../actors/http.ts';
import { DriveClient } from '../../../actors/drive/client.ts';
import { create, encryptContent, hex16, nodeKeys, share } from '../../../actors/drive/objects.ts';

export function relayFuzzChecks(t: RelayTarget): Check[] {
  return fuzzChecks('relay', { document: ['ra.errors.listed-statuses', 'ra.errors.envelope'], profile: ['ra.errors.openapi-statuses'] }, () => relayDoor(t));
}

async function relayDoor(t: RelayTarget): Promise<FrontDoor> {
  const s = new Session(t);
  // The fuzzer writes to a sink; the kept message goes from peer to keeper, whom the fuzz never touches.
  const [fuzzer, sink, peer, keeper] = [await s.identity(), await s.identity(), await s.identity(), await s.identity()];
  const facts = (await s.facts()).relay;
  // Event streams stay open by design: they are judged by the events checks, not fuzzed.
  const operations = loadOperations(specFile('relay')).filter((op) => !op.path.startsWith('/events/') && !op.path.endsWith('/events'));
  // The fuzzer holds a passkey: the keystore fetch is fuzzed past a valid assertion, removals past a valid envelope.
  const passkey = new SoftwareAuthenticator(-7);
  const enrollment = { enrollment_id: 'fuzz-passkey', kind: 'passkey', wrap: 'prf', ...passkey.credential() };
  const wrapped = { iv: randomBytes(12).toString('base64url'), ciphertext: randomBytes(48).toString('base64url') };
  const enrolled = await s.relay.keystoreEnroll(fuzzer, { ...enrollment, wrapped: JSON.stringify(wrapped) });
  if (enrolled.status !== 200) throw new Error(`enrolling the fuzzer's passkey answered ${said(enrolled)}`);
  // ... and a pairing offer of its own: the approver's calls are signed for its code, the new device's bear its token.
  const device = { ephemeral_public_key: randomBytes(32).toString('base64url'), commit_nonce: randomBytes(32).toString('base64url') };
  const offered = await s.relay.enrollOffer(fuzzer.identity, { commitment: pairingCommitment(s.profile, device), label: 'fuzz' });
  const pairing = offered.json() as { rendezvous_id?: string; claim_token?: string };
  if (offered.status !== 201 || !pairing.rendezvous_id || !pairing.claim_token) throw new Error(`the fuzzer's pairing offer answered ${said(offered)}`);
  const code = pairing.rendezvous_id;
  // ... and a drive of its own.
  const fuzzDrive = await fuzzerDrive(s, t, fuzzer);
  const { params: driveParams, kept: driveKept } = fuzzDrive;
  const bearerOps = new Set(['enrollReveal', 'enrollPoll', 'enrollAbandon']);
  const param = (name: string): string =>
    driveParams[name] ??
    (name === 'identity'
      ? fuzzer.identity
      : name === 'enrollment'
        ? `enr-${randomBytes(6).toString('hex')}`
        : name === 'rendezvous'
          ? code
          : name === 'path'
            ? 'public/profile.json'
            : `sess_${randomBytes(6).toString('hex')}`);
  const params = (op: Operation): Record<string, string> => Object.fromEntries(op.pathParams.map((p) => [p, param(p)]));
  const challenge = async (): Promise<string> => String(((await s.relay.challenge(fuzzer.identity)).json() as { challenge?: unknown }).challenge);
  const wrappedDigest = createHash('sha256').update(JSON.stringify(wrapped)).digest('base64url');
  const bodies: Record<string, () => Record<string, unknown>> = {
    postMessage: () => mail(s, fuzzer, sink, 'fuzz'),
    postAck: () => ack(s.profile, fuzzer, sink.identity, `m_${randomBytes(6).toString('hex')}`),
    consume: () => ({ through: '0', ack_through: '0' }),
    registerSession: () => sessionRegistration(s.profile, fuzzer, new Uint8Array(randomBytes(32))),
    driveCommit: fuzzDrive.commit,
    driveMissing: fuzzDrive.missing,
    register: () => {
      const id: RelayIdentity = newRelayIdentity(`f${randomBytes(5).toString('hex')}.${facts.hostedDomains[0] ?? 'id.test'}`);
      return registration(s.profile, id, facts.relayAddress, inviteOf(t));
    },
  };
  return {
    base: t.url,
    operations,
    draft: async (op): Promise<Draft> => {
      const d: Draft = {
        params: params(op),
        query: op.query.includes('identity') ? { identity: fuzzer.identity } : op.query.includes('handle') ? { handle: 'fuzz', domain: facts.hostedDomains[0] ?? 'id.test' } : {},
      };
      const body = bodies[op.id]?.();
      const me = fuzzer.identity;
      if (op.id === 'keystoreEnroll') {
        const signed = { identity: me, enrollment_id: enrollment.enrollment_id, kind: enrollment.kind, credential_id: enrollment.credential_id, wrapped_digest: wrappedDigest };
        return { ...d, body: { ...enrollment, wrapped, ...adminEnvelope(s.profile, 'keystore-enroll', signed, fuzzer.seed) } };
      }
      if (op.id === 'keystoreList') return { ...d, body: adminEnvelope(s.profile, 'keystore-list', { identity: me }, fuzzer.seed) };
      if (op.id === 'keystoreRemove') return { ...d, body: adminEnvelope(s.profile, 'keystore-remove', { identity: me, enrollment_id: d.params.enrollment! }, fuzzer.seed) };
      if (op.id === 'driveChunkPut') return { ...d, raw: fuzzDrive.chunk, contentType: 'application/octet-stream' };
      if (op.id === 'systemPut') return { ...d, body: { version: 1, display_name: 'Fuzz' } };
      if (op.id === 'enrollOffer') return { ...d, body: { commitment: randomBytes(32).toString('base64url'), label: 'fuzz' } };
      if (op.id === 'enrollFetch')
        return {
          ...d,
          body: { approver_nonce: randomBytes(32).toString('base64url'), mode: 'compare', ...adminEnvelope(s.profile, 'enroll-fetch', { identity: me, rendezvous_id: code }, fuzzer.seed) },
        };
      if (op.id === 'enrollReveal') return { ...d, body: { ...device } };
      if (op.id === 'enrollDeliver')
        return { ...d, body: { sealed: randomBytes(48).toString('base64url'), ...adminEnvelope(s.profile, 'enroll-deliver', { identity: me, rendezvous_id: code }, fuzzer.seed) } };
      if (op.id === 'keystoreFetch') return { ...d, body: { assertion: passkey.assert({ challenge: await challenge(), rpId: me }), rp_id: me } };
      if (op.id === 'revokeSession')
        return { ...d, body: { identity: fuzzer.identity, ...adminEnvelope(s.profile, 'session-revocation', { identity: fuzzer.identity, session_id: d.params.id! }, fuzzer.seed) } };
      return body ? { ...d, body } : op.bodyTypes.length > 0 ? { ...d, body: {} } : d;
    },
    open: async (op, path, body) =>
      bearerOps.has(op.id)
        ? { authorization: `Bearer ${pairing.claim_token}` }
        : op.authenticated
          ? signedRequestHeaders(s.profile, { identity: fuzzer.identity, seed: fuzzer.seed, method: op.method, path, body: body ?? '' })
          : {},
    cap: (op) => (op.id === 'postMessage' || op.id === 'postAck' ? limits.message_body_max_bytes : undefined),
    keep: async () => {
      const m = mail(s, peer, keeper, 'kept through the fuzz');
      const sent = await s.relay.send(m);
      return async () => {
        const lost = await driveKept();
        if (lost) return lost;
        if (sent.status !== 202) return `the message sent before the fuzz was not accepted: ${said(sent)}`;
        const p = pickupOf(await s.relay.pickup(keeper, { mode: 'signed-request' }));
        if (typeof p === 'string') return `after the fuzz, ${p}`;
        if (p.messages.some((x) => x.id === m.id)) return undefined;
        // A fuzz longer than a short SPOOL_TTL sees the mail expire: then its sender gets the failed
        // ack, once the relay has given up on it (a sweep that may come a while after the TTL).
        if (await failedAckWithin(s, peer, String(m.id), Math.max(10, t.declared.spoolTtlS ?? 0))) return undefined;
        return `the message accepted before the fuzz (${String(m.id)}) was lost: not delivered, and no sys.delivery.failed ack reached its sender within ${Math.max(10, t.declared.spoolTtlS ?? 0)} s`;
      };
    },
    alive: async () => {
      const r = await s.relay.get('/health');
      return r.status === 200 ? undefined : `after the fuzz GET /health answered ${said(r)}`;
    },
  };
}

/**
 * The fuzzer's drive: a root, a file with one chunk and a link (valid ids for every drive path
 * parameter), what a drive commit and missing list look like, and a check that what it accepted
 * before the fuzz still reads back after it.
 */
async function fuzzerDrive(s: Session, t: RelayTarget, fuzzer: RelayIdentity) {
  const drive = new DriveClient(s.profile, t.url, new HttpClient({ timeoutMs: t.requestTimeoutMs }));
  const me = { identity: fuzzer.identity, seed: fuzzer.seed };
  const rootKeys = nodeKeys();
  const fileKeys = nodeKeys(undefined, true);
  const chunks = encryptContent(s.profile, fuzzer.identity, fileKeys, Buffer.from('fuzz'));
  const fileBody = create(s.profile, {
    drive: fuzzer.identity,
    author: me,
    keys: fileKeys,
    kind: 'file',
    at: { folder: rootKeys, name: 'fuzz.txt' },
    ownerEncryption: fuzzer.encryption.publicKey,
    chunks,
  });
  const linkId = hex16();
  for (const step of [
    () => drive.commit(fuzzer.identity, me, create(s.profile, { drive: fuzzer.identity, author: me, keys: rootKeys, kind: 'folder', at: {}, ownerEncryption: fuzzer.encryption.publicKey })),
    async () => ({ status: (await drive.upload(fuzzer.identity, me, chunks)) === undefined ? 200 : 500, text: () => 'upload failed' }),
    () => drive.commit(fuzzer.identity, me, fileBody),
    () => drive.commit(fuzzer.identity, me, share(s.profile, { drive: fuzzer.identity, issuer: me, node: fileKeys, role: 'read', link: linkId }).body),
  ]) {
    const r = await step();
    if (r.status !== 200) throw new Error(`setting up the fuzzer's drive answered ${r.status}: ${r.text().slice(0, 200)}`);
  }
  await drive.http.close();
  const fileManifest = fileBody.manifest as Record<string, unknown>;
  const driveParams: Record<string, string> = { node: fileKeys.node, version: String(fileManifest.version), page: String((fileManifest.pages as string[])[0]), hash: chunks[0]!.id, link: linkId };
  // What the drive accepted before the fuzz still reads back after it: the file's head and its chunk's bytes.
  const driveKept = async (): Promise<string | undefined> => {
    const reader = new DriveClient(s.profile, t.url, new HttpClient({ timeoutMs: t.requestTimeoutMs, maxBodyBytes: 8 * 1024 * 1024 }));
    try {
      const head = await reader.node(fuzzer.identity, me, fileKeys.node);
      if (head.status !== 200 || !head.text().includes(driveParams.version!)) return `after the fuzz the drive's file answered ${said(head)}, not its head ${driveParams.version!}`;
      const c = await reader.chunk(fuzzer.identity, me, fileKeys.node, driveParams.version, chunks[0]!.id);
      return c.status === 200 && Buffer.from(c.body).equals(Buffer.from(chunks[0]!.bytes)) ? undefined : `after the fuzz the file's chunk answered ${said(c)}, not the bytes stored before`;
    } finally {
      await reader.http.close();
    }
  };
  return {
    params: driveParams,
    kept: driveKept,
    commit: () =>
      create(s.profile, { drive: fuzzer.identity, author: me, keys: nodeKeys(), kind: 'folder', at: { folder: rootKeys, name: `f${hex16()}` }, ownerEncryption: fuzzer.encryption.publicKey }),
    missing: () => ({ chunks: [{ id: chunks[0]!.id, size: chunks[0]!.size }] }),
    chunk: chunks[0]!.bytes,
  };
}
