// Properties under fast-check (seeded, shrunk, replayable with --seed/--replay):
// - any single mutation of a signed message (a signed field changed, the signature's bits, the
//   encryption parameters) is refused and never reaches the inbox, and the genuine envelope is
//   still accepted afterwards;
// - a model of each inbox: random sequences of send, ack, pickup (drain), cursor read (nothing
//   forgotten) and restart (when the target can be restarted) run against the relay, every answer
//   compared with the model. The sequence is plain data, so it shrinks to a minimal trace.
import fc from 'fast-check';
import type { Check } from '../../../run/model.ts';
import type { PropertyVerdict } from '../../../run/property.ts';
import { ack, type Envelope, type RelayIdentity } from '../../../actors/relay/index.ts';
import { relayProperty } from '../check.ts';
import { Session, accepted, pickupOf, refused, restartTarget, said, type RelayTarget } from '../driver.ts';
import { mail } from './messaging.ts';

const MAX_MUTATION_RUNS = 25;
const MAX_SEQUENCES = 12;
const MAX_COMMANDS = 10;

type Mutation =
  { field: 'sender' | 'recipient' | 'timestamp' | 'payload' | 'id'; how: 'change' } | { field: 'signature'; bit: number } | { field: 'encryption'; part: 'ephemeral_public_key' | 'nonce' };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ field: fc.constantFrom('timestamp' as const, 'payload' as const, 'id' as const), how: fc.constant('change' as const) }),
  fc.record({ field: fc.constant('signature' as const), bit: fc.integer({ min: 0, max: 511 }) }),
  fc.record({ field: fc.constant('encryption' as const), part: fc.constantFrom('ephemeral_public_key' as const, 'nonce' as const) }),
);

function mutate(m: Envelope, mu: Mutation): Envelope {
  const out: Envelope = { ...m, encryption: { ...(m.encryption as Record<string, unknown>) } };
  if (mu.field === 'signature') {
    const sig = Buffer.from(String(m.signature), 'base64');
    const i = mu.bit >> 3;
    sig[i] = sig[i]! ^ (1 << (mu.bit & 7));
    out.signature = sig.toString('base64');
  } else if (mu.field === 'encryption') {
    const enc = out.encryption as Record<string, string>;
    enc[mu.part] = `${enc[mu.part]!.slice(0, -2)}${enc[mu.part]!.endsWith('AA') ? 'BB' : 'AA'}`;
  } else if (mu.field === 'timestamp') {
    out.timestamp = new Date(Date.parse(String(m.timestamp)) + 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  } else {
    const v = String(m[mu.field]);
    out[mu.field] = `${v.slice(0, -1)}${v.endsWith('A') ? 'B' : 'A'}`;
  }
  return out;
}

type Cmd = { op: 'send'; from: 0 | 1; to: 0 | 1 } | { op: 'ack'; by: 0 | 1 } | { op: 'pickup'; who: 0 | 1 } | { op: 'read'; who: 0 | 1 } | { op: 'restart' };

export function propertyChecks(t: RelayTarget): Check[] {
  const rt = restartTarget(t);
  const who = fc.constantFrom(0 as const, 1 as const);
  // A restart costs a process start (seconds on a loaded machine), so it is drawn a quarter as
  // often as each other command: about 30 restarts per 100 runs, still many a send → restart →
  // pickup, and a run that stays well inside its time limit under load.
  const commands: fc.WeightedArbitrary<Cmd>[] = [
    { arbitrary: fc.record({ op: fc.constant('send' as const), from: who, to: who }), weight: 4 },
    { arbitrary: fc.record({ op: fc.constant('ack' as const), by: who }), weight: 4 },
    { arbitrary: fc.record({ op: fc.constant('pickup' as const), who }), weight: 4 },
    { arbitrary: fc.record({ op: fc.constant('read' as const), who }), weight: 4 },
  ];
  if (rt) commands.push({ arbitrary: fc.record({ op: fc.constant('restart' as const) }), weight: 1 });
  const mutations = relayProperty({
    id: 'relay/properties/mutations',
    title: 'any single mutation of a signed message is refused and never delivered; the genuine message is accepted afterwards',
    rules: ['ra.messages.signature', 'ra.relay.verify-before-store'],
    arbitrary: mutation,
    predicate: async (mu, ctx): Promise<PropertyVerdict> => {
      const s = new Session(t, ctx.signal);
      try {
        const [a, b] = [await s.identity(), await s.identity()];
        const m = mail(s, a, b, 'genuine');
        const bad = mutate(m, mu);
        const r = await s.relay.send(bad);
        const problems: string[] = [];
        if (!refused(r)) problems.push(`the mutated message (${JSON.stringify(mu)}) was answered ${said(r)}`);
        const good = await s.relay.send(m);
        if (!accepted(good)) problems.push(`the genuine message afterwards: ${said(good)}`);
        const p = pickupOf(await s.relay.pickup(b));
        if (typeof p === 'string') problems.push(p);
        else {
          // Exactly the genuine message, as signed: a stored mutant shows as a second message, or
          // in the genuine one's place when it kept the same id.
          const genuine = (x: Record<string, unknown>) =>
            x.id === m.id && x.payload === m.payload && x.signature === m.signature && x.timestamp === m.timestamp && JSON.stringify(x.encryption) === JSON.stringify(m.encryption);
          const others = p.messages.filter((x) => !genuine(x));
          if (others.length > 0) problems.push(`the mutated message was delivered: ${JSON.stringify(others[0]).slice(0, 200)}`);
          if (!p.messages.some(genuine)) problems.push('the genuine message is not in the pickup');
        }
        return problems.length === 0 ? true : { ok: false, detail: problems.join('; '), evidence: s.evidence() };
      } finally {
        await s.close();
      }
    },
  });
  const model = relayProperty({
    id: 'relay/properties/inbox-model',
    // It restarts a relay between commands (restartTarget says which). Restarts on a loaded machine take
    // seconds each: 3 minutes per run (the limit restarts after each), lest a timeout leave it down.
    ...(rt?.placement ?? {}),
    timeoutMs: 180_000,
    title: `a model of each inbox: random sequences of send, ack, pickup, cursor read${rt ? ' and restart' : ''}, every answer as the model says`,
    rules: ['ra.pickup.drain', 'ra.pickup.cursor', 'ra.acks.accepted', ...(rt ? (['ra.spool.durable'] as const) : [])],
    context: ['ra.messages.accepted'],
    arbitrary: fc.array(fc.oneof(...commands), { minLength: 1, maxLength: MAX_COMMANDS }),
    predicate: async (cmds, ctx): Promise<PropertyVerdict> => {
      const s = new Session(rt?.target ?? t, ctx.signal);
      const trace: string[] = [];
      try {
        const ids: [RelayIdentity, RelayIdentity] = [await s.identity(), await s.identity()];
        // What each inbox holds (message ids, acks' ids), and what each one has picked up but not acked.
        const inbox: [string[], string[]] = [[], []];
        const acks: [string[], string[]] = [[], []];
        const received: [Envelope[], Envelope[]] = [[], []];
        for (const c of cmds) {
          if (c.op === 'send') {
            const m = mail(s, ids[c.from], ids[c.to], `m${trace.length}`);
            const r = await s.relay.send(m);
            trace.push(`send ${c.from}->${c.to}: ${r.status}`);
            if (r.status !== 202) return { ok: false, detail: `${trace.join('; ')}: expected 202 (${said(r)})`, evidence: s.evidence() };
            inbox[c.to].push(String(m.id));
          } else if (c.op === 'ack') {
            const m = received[c.by].shift();
            if (!m) {
              trace.push(`ack by ${c.by}: nothing to ack`);
              continue;
            }
            const k = ack(s.profile, ids[c.by], String(m.sender), String(m.id));
            const r = await s.relay.ack(k);
            trace.push(`ack by ${c.by} of ${String(m.id)}: ${r.status}`);
            if (r.status !== 202) return { ok: false, detail: `${trace.join('; ')}: expected 202 (${said(r)})`, evidence: s.evidence() };
            const to = ids[0].identity === m.sender ? 0 : 1;
            acks[to].push(String(k.id));
          } else if (c.op === 'restart') {
            await rt!.target.restart();
            trace.push('restart');
          } else {
            const p = pickupOf(await s.relay.pickup(ids[c.who], { mode: 'signed-request' }, c.op === 'read' ? '0' : undefined));
            if (typeof p === 'string') return { ok: false, detail: `${trace.join('; ')}; ${c.op} ${c.who}: ${p}`, evidence: s.evidence() };
            const gotM = p.messages.map((x) => String(x.id)).sort();
            const gotA = p.acks.map((x) => String(x.id)).sort();
            trace.push(`${c.op} ${c.who}: ${gotM.length} messages, ${gotA.length} acks`);
            const wantM = [...inbox[c.who]].sort();
            const wantA = [...acks[c.who]].sort();
            if (JSON.stringify(gotM) !== JSON.stringify(wantM) || JSON.stringify(gotA) !== JSON.stringify(wantA)) {
              return {
                ok: false,
                detail: `${trace.join('; ')}: the model expects messages [${wantM.join(', ')}] and acks [${wantA.join(', ')}], the relay gave [${gotM.join(', ')}] and [${gotA.join(', ')}]`,
                evidence: s.evidence(),
              };
            }
            if (c.op === 'pickup') {
              received[c.who].push(...p.messages);
              inbox[c.who] = [];
              acks[c.who] = [];
            }
          }
        }
        return true;
      } finally {
        await s.close();
      }
    },
  });
  return [
    { ...mutations, run: (ctx) => mutations.run({ ...ctx, runs: Math.min(ctx.runs, MAX_MUTATION_RUNS) }) },
    { ...model, run: (ctx) => model.run({ ...ctx, runs: Math.min(ctx.runs, MAX_SEQUENCES) }) },
  ];
}
