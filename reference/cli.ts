// svc-reference: the reference servers, one subcommand each from the table below (each server
// defines its flags in its own folder), then runs until SIGINT/SIGTERM.
import cluster from 'node:cluster';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { rpServer } from './rp/cli.ts';
import { bridgeServer } from './bridge/cli.ts';
import { relayServer } from './relay/cli.ts';
import type { ReferenceIO, ServerDefinition, Started } from './servers.ts';

export type { ReferenceIO } from './servers.ts';

export const SERVERS: readonly ServerDefinition[] = [rpServer, bridgeServer, relayServer];

export async function main(argv: string[], io: ReferenceIO = { stdout: process.stdout, stderr: process.stderr }): Promise<Started> {
  let result: Started = { code: 0 };
  const program = new Command('svc-reference')
    .description(`Reference servers of the svc protocols:\n${SERVERS.map((s) => `  ${s.name.padEnd(8)}${s.summary}`).join('\n')}`)
    .exitOverride()
    .configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(s) })
    .showHelpAfterError();
  for (const server of SERVERS) server.register(program, io, (r) => (result = r));
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return { code: error.exitCode === 0 ? 0 : 2 };
    io.stderr.write(`svc-reference: ${(error as Error).message}\n`);
    return { code: 2 };
  }
  if (argv.length === 0) {
    program.outputHelp();
    return { code: 2 };
  }
  return result;
}

/** Runs as the process entry point: serves until SIGINT/SIGTERM, then closes and exits. */
async function entry(): Promise<void> {
  const argv = process.argv.slice(2);
  const { code, running } = await main(argv);
  if (!running) {
    process.exitCode = code;
    return;
  }
  const name = `svc-reference ${argv[0] ?? ''}`.trim();
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    // Workers of `rp --workers N` close quietly: their primary speaks for them.
    if (!cluster.isWorker) process.stderr.write(`${name}: ${signal}, closing\n`);
    const force = setTimeout(() => process.exit(1), 5000);
    force.unref();
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`${name}: close failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

const invoked = process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
if (invoked || process.env.SVC_REFERENCE_ENTRY === '1') await entry();

export { DEFAULT_NAME } from './rp/config.ts';
