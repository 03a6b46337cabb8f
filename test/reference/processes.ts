// Spawns `bin/svc-reference.js rp` as a user would and waits for its one listening line.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('../../', import.meta.url));
export const bin = join(root, 'bin/svc-reference.js');

export interface RpProcess {
  child: ChildProcess;
  origin: string;
  url: string;
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export const LISTENING = /^svc-reference rp listening on (\S+) \((\S+)\)$/;

export function spawnRp(args: string[]): Promise<RpProcess> {
  const child = spawn(process.execPath, [bin, 'rp', '--port', '0', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    // Generous: two test files and other work may share the cores while it starts.
    const timer = setTimeout(() => reject(new Error(`rp did not start within 60 s: ${err}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const line = out.split('\n')[0]!;
      const m = LISTENING.exec(line);
      if (m && out.includes('\n')) {
        clearTimeout(timer);
        resolve({
          child,
          origin: m[1]!,
          url: m[2]!,
          stderr: () => err,
          stop: (signal = 'SIGTERM') => {
            if (child.exitCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`rp exited ${code}: ${err}`));
    });
  });
}
