// Vitest global setup: one scratch directory for the whole run, made the temporary directory of
// every test and of every server the tests start (TMPDIR, read by os.tmpdir()), and removed at
// the end, so no run leaves data directories, reports or keys behind in the system's /tmp.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function scratch(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tests-'));
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
