// The implementation a vector run checks: by default the protocol core. Tests inject a broken one
// to show that the suite catches it (a verifier that skips rule 2 must fail with ns.verify.2).
import { createVerifier } from '../../../protocol/verifier.ts';
import { canonicalString, keyFingerprint, pairingCommitment, pairingSas, pairwiseSubject } from '../../../protocol/canonical.ts';
import { verifyEd25519, signEd25519, publicKeyFromSeed } from '../../../protocol/ed25519.ts';
import { normalizeIdInput } from '../../../protocol/id-input.ts';
import { referenceFromInput, normalizeShortCode } from '../../../protocol/reference.ts';
import { normalizeOrigin, sameOrigin } from '../../../protocol/url.ts';
import { validServiceName, claimable, hostedReason, dirName } from '../../../protocol/names.ts';
import { documentCanonical, verifyDocument, keyValidAt, previousKeys } from '../../../protocol/document.ts';
import { checkProfileDocument } from '../../../protocol/profile-document.ts';
import { openMessage } from '../../../protocol/seal.ts';
import { encodeObject, decodeObject } from '../../../protocol/codec.ts';
import { checkSessionProof } from '../../../protocol/session-proof.ts';

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
  openMessage,
  encodeObject,
  decodeObject,
  checkSessionProof,
};

export type Core = typeof protocolCore;
