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
};

export type Core = typeof protocolCore;
