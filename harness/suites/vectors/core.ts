// The implementation a vector run checks: by default the protocol core. Tests inject a broken one
// to show that the suite catches it (a verifier that skips rule 2 must fail with ns.verify.2).
import { createVerifier } from '../../../protocol/signin/verifier.ts';
import { canonicalString, keyFingerprint, pairingCommitment, pairingSas, pairwiseSubject } from '../../../protocol/common/canonical.ts';
import { verifyEd25519, signEd25519, publicKeyFromSeed } from '../../../protocol/common/ed25519.ts';
import { normalizeIdInput } from '../../../protocol/bridge/id-input.ts';
import { referenceFromInput, normalizeShortCode } from '../../../protocol/signin/reference.ts';
import { normalizeOrigin, sameOrigin } from '../../../protocol/common/url.ts';
import { validServiceName, claimable, hostedReason, dirName } from '../../../protocol/common/names.ts';
import { documentCanonical, verifyDocument, keyValidAt, previousKeys } from '../../../protocol/common/document.ts';
import { checkProfileDocument } from '../../../protocol/bridge/profile-document.ts';
import { checkContacts, checkInboxPolicy } from '../../../protocol/relay/system-files.ts';
import { openMessage } from '../../../protocol/relay/seal.ts';
import { encodeObject, decodeObject } from '../../../protocol/common/codec.ts';
import { checkSessionProof } from '../../../protocol/signin/session-proof.ts';
import { x25519PublicKey } from '../../../protocol/relay/seal.ts';
import { driveString } from '../../../protocol/relay/drive/framing.ts';
import { driveContext } from '../../../protocol/relay/drive/context.ts';
import { sealChunk, openChunk, chunkId, validChunkSize } from '../../../protocol/relay/drive/chunk.ts';
import { sealTo, openSeal, sealKindOf } from '../../../protocol/relay/drive/seal.ts';
import { normalizeName, nameHash } from '../../../protocol/relay/drive/names.ts';
import { deriveLink, verifierHash } from '../../../protocol/relay/drive/link.ts';
import { clampPowBits, checkPow } from '../../../protocol/relay/drive/pow.ts';
import { guestAuthor, guestKey } from '../../../protocol/relay/drive/guest.ts';
import { verifyDrive, driveHash } from '../../../protocol/relay/drive/sign.ts';
import { manifestProblems, verifyPages } from '../../../protocol/relay/drive/manifest.ts';
import { recordProblems, chainProblem, openRecord } from '../../../protocol/relay/drive/record.ts';
import { shareProblems } from '../../../protocol/relay/drive/share.ts';
import { openKeyring } from '../../../protocol/relay/drive/groups.ts';

/** The drive's formats (protocol/relay/drive), one namespace so a test can break one piece. */
const drive = {
  driveString,
  driveContext,
  sealChunk,
  openChunk,
  chunkId,
  validChunkSize,
  sealTo,
  openSeal,
  sealKindOf,
  normalizeName,
  nameHash,
  deriveLink,
  verifierHash,
  clampPowBits,
  checkPow,
  guestAuthor,
  guestKey,
  verifyDrive,
  driveHash,
  manifestProblems,
  verifyPages,
  recordProblems,
  chainProblem,
  openRecord,
  shareProblems,
  openKeyring,
  x25519PublicKey,
};

export const protocolCore = {
  createVerifier,
  canonicalString,
  keyFingerprint,
  pairingCommitment,
  pairingSas,
  pairwiseSubject,
  verifyEd25519,
  signEd25519,
  publicKeyFromSeed,
  normalizeIdInput,
  referenceFromInput,
  normalizeShortCode,
  normalizeOrigin,
  sameOrigin,
  validServiceName,
  claimable,
  hostedReason,
  dirName,
  documentCanonical,
  verifyDocument,
  keyValidAt,
  previousKeys,
  checkProfileDocument,
  checkContacts,
  checkInboxPolicy,
  openMessage,
  encodeObject,
  decodeObject,
  checkSessionProof,
  drive,
};

export type Core = typeof protocolCore;
