// The pace of the matrix checks of document 2 (issue 25). They share one lane of their own, so
// they run beside the suite's other checks instead of after them; and one cap on the sign-ins
// they have in flight, so their independent cells overlap without a burst of sign-ins (each
// resolves an identity at the bridge, and the harness's signer resolves it again) outrunning a
// loaded target's resolver.
import { limiter } from '../../../actors/oidc/race.ts';

export const MATRIX_LANE = 'bridge/matrix';

/** Runs a sign-in (or any step that resolves an identity) within the matrix checks' cap. */
export const matrixSignIn = limiter(2);
