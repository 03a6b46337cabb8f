// The pace of the matrix checks of document 2 (issue 25). Their sign-ins go one at a time, while
// the rest of a check's independent cells (redemptions, userinfo, introspection, revocation)
// overlap: a sign-in has the bridge resolve an identity twice (the ID entered, the approval
// verified), and on a loaded machine a burst of them outran the reference's resolver. For the
// same reason they run in the suite's own lane, one after another, like its other checks; only
// the two that mostly wait out a lifetime share a lane beside it, one after the other.
import { limiter } from '../../../actors/oidc/race.ts';

/** Runs a sign-in (or any step that resolves an identity) within the matrix checks' cap. */
export const matrixSignIn = limiter(1);

/** The lane of the window checks: they wait out the code's and the transaction's lifetimes beside the suite. */
export const WINDOW_LANE = 'bridge/matrix/windows';
