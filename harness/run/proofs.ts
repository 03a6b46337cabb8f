// The rules proven by `npm run sensitivity -- --write` (proofs.json beside this file): a broken
// variant of the reference that breaks exactly that rule failed a check citing it. The coverage
// table shows them as "proven" beside "covered".
import { readFileSync } from 'node:fs';

interface Proofs {
  proofs: Array<{ rule: string; suite: string; variant: string; checks: string[] }>;
}

let loaded: ReadonlySet<string> | undefined;

export function provenRules(): ReadonlySet<string> {
  if (loaded) return loaded;
  try {
    const file = JSON.parse(readFileSync(new URL('./proofs.json', import.meta.url), 'utf8')) as Proofs;
    loaded = new Set(file.proofs.map((p) => p.rule));
  } catch {
    loaded = new Set();
  }
  return loaded;
}
