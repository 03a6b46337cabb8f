// `npm run bench`: figures as ratios measured in one run, never absolute thresholds in tests.
// `npm run bench -- verifier` or `-- rp` runs one; `--strict` exits 1 when a ratio is below target;
// `relay --cluster` measures one relay process against two sharing their state (./relay-cluster.ts).
import { benchVerifier, type BenchRow } from './verifier.ts';
import { benchRpDelivery } from './rp-delivery.ts';
import { benchBridgeToken } from './bridge.ts';
import { benchRelay } from './relay.ts';
import { benchRelayCluster } from './relay-cluster.ts';
import { benchDrive } from './drive.ts';

const benches: Record<string, () => Promise<BenchRow[]>> = {
  verifier: benchVerifier,
  rp: benchRpDelivery,
  bridge: benchBridgeToken,
  relay: () => (process.argv.includes('--cluster') ? benchRelayCluster() : benchRelay()),
  drive: benchDrive,
};
const chosen = process.argv.slice(2).filter((a) => !a.startsWith('--'));
for (const name of chosen) if (!(name in benches)) throw new Error(`unknown benchmark ${name}; known: ${Object.keys(benches).join(', ')}`);

const rows: BenchRow[] = [];
for (const [name, run] of Object.entries(benches)) if (chosen.length === 0 || chosen.includes(name)) rows.push(...(await run()));

const w = Math.max(...rows.filter((r) => !r.note).map((r) => r.name.length));
process.stdout.write(`${'benchmark'.padEnd(w)}  ${'ops/s'.padStart(10)}  ${'ratio'.padStart(6)}  target\n`);
for (const r of rows) {
  if (r.note) {
    process.stdout.write(`${r.name}\n`);
    continue;
  }
  if (r.value !== undefined) {
    process.stdout.write(`${r.name.padEnd(w)}  ${r.value.toFixed(2).padStart(10)}\n`);
    continue;
  }
  const mark = r.target === undefined ? '' : r.ratio! >= r.target ? `>= ${r.target} ok` : `>= ${r.target} BELOW TARGET`;
  process.stdout.write(`${r.name.padEnd(w)}  ${Math.round(r.opsPerSecond).toString().padStart(10)}  ${r.ratio === undefined ? '      ' : r.ratio.toFixed(3).padStart(6)}  ${mark}\n`);
}
if (process.argv.includes('--strict') && rows.some((r) => r.target !== undefined && r.ratio! < r.target)) process.exitCode = 1;
