// The capabilities file's shape (a project decision, ra.system.capabilities-shape): an object
// whose `endpoints`, when present, is an object. Anything else is refused 400 and the stored file
// kept; an object with endpoints, and one without, are taken.
import type { Check } from '../../../run/model.ts';
import { relayCheck } from '../check.ts';
import { safeJson, said, type RelayTarget } from '../driver.ts';
import { LANE } from './system-files.ts';

const CAPABILITIES = 'public/capabilities.json';

export function capabilitiesShapeCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/capabilities-shape',
    lane: LANE,
    title: 'capabilities.json that is not an object, or whose endpoints is not an object, is refused 400 and the stored file kept; an object with or without endpoints is taken',
    rules: ['ra.system.capabilities-shape'],
    context: ['ra.system.validated'],
    run: async (s, e) => {
      const id = await s.identity();
      const good = JSON.stringify({ endpoints: { web_signer: 'https://example.org/app/' } });
      const first = await s.relay.systemFile(id, 'PUT', CAPABILITIES, good);
      if (!e.that(first.status === 200, `capabilities.json with an endpoints object answered ${said(first)}`)) return;
      const bad: Array<[string, string]> = [
        ['a JSON array', '[]'],
        ['a string', '"endpoints"'],
        ['null', 'null'],
        ['endpoints as a string', JSON.stringify({ endpoints: 'https://example.org/' })],
        ['endpoints as an array', JSON.stringify({ endpoints: [] })],
      ];
      for (const [what, body] of bad) {
        const r = await s.relay.systemFile(id, 'PUT', CAPABILITIES, body);
        e.that(r.status === 400, `capabilities.json as ${what} answered ${said(r)}, expected 400`);
      }
      const kept = await s.relay.systemFile(id, 'GET', CAPABILITIES);
      e.that(JSON.stringify(safeJson(kept)) === good, `after the refused writes capabilities.json reads ${said(kept)}`);
      const bare = await s.relay.systemFile(id, 'PUT', CAPABILITIES, JSON.stringify({ version: 1 }));
      e.that(bare.status === 200, `capabilities.json without endpoints answered ${said(bare)}`);
    },
  });
}
