// The `drive` suite: document 3's end-to-end encrypted drive on any relay, over the network (the
// relay and, for members homed elsewhere, its peer; the test authority for identities). Document
// checks decide what the document says (who may do what, 409 with the head, the cursor, the
// streams, links); profile checks the project's bodies, codes and caps (spec/drive.yaml).
import type { Check, SuiteLoad } from '../../run/model.ts';
import type { RelayTarget } from '../relay/driver.ts';
import { documentChecks } from './checks/document.ts';
import { driveModelCheck } from './checks/model.ts';
import { profileChecks } from './checks/profile.ts';
import { concurrencyChecks } from './checks/concurrency.ts';
import { rosterSizeChecks } from './checks/roster-size.ts';
import { shareCapsChecks } from './checks/share-caps.ts';
import { sharesVisibleChecks } from './checks/shares-visible.ts';
import { listingChecks } from './checks/listings.ts';
import { chunkDriveChecks } from './checks/chunks-per-drive.ts';
import { missingListChecks } from './checks/missing-list.ts';
import { linkAnswerChecks } from './checks/link-answer.ts';
import { streamCapChecks } from './checks/stream-cap.ts';
import { rolesMatrix, rolesProfile } from './checks/roles-matrix.ts';
import { sharesLifecycle } from './checks/shares-lifecycle.ts';
import { readsBound } from './checks/reads-bound.ts';
import { quotaScope } from './checks/quota-scope.ts';
import { commitsOnce } from './checks/commits-once.ts';
import { shareBinding } from './checks/share-binding.ts';
import { commitBinding } from './checks/commit-binding.ts';
import { linkWriter } from './checks/link-writer.ts';
import { commitAnswers } from './checks/commit-answers.ts';
import { commitTargets } from './checks/commit-targets.ts';
import { linkStreamEnds } from './checks/link-stream.ts';
import { rotatedAuthor } from './checks/rotated-author.ts';
import { nodeRemoval } from './checks/node-removal.ts';
import { streamExpiry } from './checks/stream-expiry.ts';
import { linkMatrixChecks } from './checks/link-matrix.ts';
import { refusalChecks } from './checks/refusals.ts';

export async function driveSuite(target: RelayTarget): Promise<SuiteLoad> {
  return { checks: driveChecks(target), skipped: [], coverageDocs: [3] };
}

/** Every check of the suite, built without touching the network (the matrix lists them against a placeholder target). */
export function driveChecks(target: RelayTarget): Check[] {
  return [
    ...documentChecks(target),
    rolesMatrix(target),
    rolesProfile(target),
    sharesLifecycle(target),
    streamExpiry(target),
    readsBound(target),
    quotaScope(target),
    commitsOnce(target),
    driveModelCheck(target),
    ...profileChecks(target),
    shareBinding(target),
    commitBinding(target),
    linkWriter(target),
    commitTargets(target),
    commitAnswers(target),
    linkStreamEnds(target),
    rotatedAuthor(target),
    nodeRemoval(target),
    ...concurrencyChecks(target),
    ...rosterSizeChecks(target),
    ...shareCapsChecks(target),
    ...sharesVisibleChecks(target),
    ...listingChecks(target),
    ...chunkDriveChecks(target),
    ...missingListChecks(target),
    ...linkAnswerChecks(target),
    ...streamCapChecks(target),
    ...linkMatrixChecks(target),
    ...refusalChecks(target),
  ];
}
