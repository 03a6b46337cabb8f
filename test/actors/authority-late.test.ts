// The test authority's witness of its own lateness: an answer the target gave up on before the
// authority finished it is reported to the run's environment watch, unless a fault held it back
// on purpose (harness/actors/authority/late.ts).
import { createServer, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchAnswers } from '../../harness/actors/authority/late.ts';
import { faultsBetween } from '../../harness/run/environment.ts';

const held = new Set<ServerResponse>();
const server = createServer(
  watchAnswers({
    // A slow authority: it answers after a second; `/held` is held back on purpose, as a fault would.
    serveDocument: (req, res) => {
      if (req.url === '/held') held.add(res);
      const t = setTimeout(() => res.end('{}'), 1000);
      res.on('close', () => clearTimeout(t));
    },
    held,
    hosted: { holding: () => false } as never,
  }),
);
let base: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function giveUp(path: string): Promise<void> {
  await fetch(`${base}${path}`, { signal: AbortSignal.timeout(600) }).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 100)); // the close reaches the server
}

describe('the authority witness', () => {
  it('reports an answer the target gave up on, naming the request', async () => {
    const start = performance.now();
    await giveUp('/.well-known/svc/id.json');
    const faults = faultsBetween(start, performance.now());
    expect(faults.map((f) => f.cause)).toEqual(['authority-late']);
    expect(faults[0]!.detail).toMatch(/GET https:\/\/127\.0\.0\.1:\d+\/\.well-known\/svc\/id\.json was given up on by the target after \d+ ms/);
  });

  it('does not count an answer a fault holds back on purpose', async () => {
    const start = performance.now();
    await giveUp('/held');
    expect(faultsBetween(start, performance.now())).toEqual([]);
  });
});
