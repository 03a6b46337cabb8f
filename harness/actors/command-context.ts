// What a command module (harness/commands/signer.ts, authority.ts) gets from harness/cli.ts
// `main`: the streams, commander configuration (exitOverride and output capture) and the exit code.
import type { Command } from 'commander';
import type { Output } from '../report/console.ts';

export interface CommandContext {
  io: { stdout: Output; stderr: Output; signal?: AbortSignal; env?: Record<string, string | undefined> };
  configure: (cmd: Command) => Command;
  setCode: (code: number) => void;
}

/** Resolves when SIGINT or SIGTERM arrives, or `signal` aborts. */
export function untilInterrupted(signal?: AbortSignal): Promise<string> {
  return new Promise((resolve) => {
    const done = (why: string) => () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      signal?.removeEventListener('abort', onAbort);
      resolve(why);
    };
    const onInt = done('SIGINT');
    const onTerm = done('SIGTERM');
    const onAbort = done('abort');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
