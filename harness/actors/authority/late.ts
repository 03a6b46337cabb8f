// The authority's own account of answers it failed to give in time: a target that gave up on an
// answer before the authority finished it (it closed the connection first) met the harness's
// slowness, not a fault a check injected. Each such answer is reported to the run's environment
// watch (harness/run/environment.ts), which keeps the verdict of a check it touched from counting
// against the target. Answers a fault holds back on purpose are not counted.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { reportEnvironmentFault } from '../../run/environment.ts';
import type { Records } from './records.ts';

/** A target that gives up this long after the request arrived was waiting on the authority, not refusing a body. */
const GAVE_UP_AFTER_MS = 500;

/** The records' HTTPS handler, watched; `held` and `hosted.holding` know the answers held back on purpose. */
export function watchAnswers(records: Pick<Records, 'serveDocument' | 'held' | 'hosted'>): (req: IncomingMessage, res: ServerResponse) => void {
  const deliberate = (res: ServerResponse): boolean => records.held.has(res) || records.hosted.holding(res);
  return (req, res) => {
    const arrived = performance.now();
    res.once('close', () => {
      if (res.writableFinished || deliberate(res)) return;
      const waited = performance.now() - arrived;
      // Headers unsent: the target left before the authority even started its answer (it read
      // the request late); sent but unfinished after a while: the target timed out mid-answer.
      if (res.headersSent && waited < GAVE_UP_AFTER_MS) return;
      const url = `https://${req.headers.host ?? '?'}${req.url ?? ''}`;
      reportEnvironmentFault(
        'authority-late',
        `the test authority's answer to ${req.method ?? 'GET'} ${url} was given up on by the target after ${Math.round(waited)} ms, before the authority finished it`,
      );
    });
    records.serveDocument(req, res);
  };
}
