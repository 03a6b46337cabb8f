// The RP's random values now live in reference/signin/codes.ts (shared with the bridge).
export { newMatchCode, newNonce, newReferenceCode, newRequestId } from '../signin/codes.ts';
// Re-exported for tests that build broken RPs (test/rp/helpers.ts); new code imports shared/secrets.ts.
export { hashSecret } from '../shared/secrets.ts';
