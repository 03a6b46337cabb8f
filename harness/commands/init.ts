// `svc-conformance init [FILE]`: writes a commented example targets file to fill in.
import { access, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { CliIO } from './shared.ts';
import { ConfigError, EXIT_PASS } from '../run/exit.ts';
import { exampleTargets } from '../targets/example.ts';

export function registerInitCommand(cmd: Command, ctx: { io: CliIO; setCode(code: number): void }): void {
  cmd
    .description('write a commented example targets file (the implementation under test) to fill in')
    .argument('[file]', 'where to write it', 'targets.json')
    .option('--force', 'overwrite an existing file')
    .addHelpText('after', '\nExample:\n  $ svc-conformance init targets.json && svc-conformance run --targets targets.json\n')
    .action(async (file: string, flags: { force?: boolean }) => {
      if (!flags.force && (await exists(file))) throw new ConfigError(`${file} exists: choose another name or pass --force`);
      await writeFile(file, exampleTargets());
      ctx.io.stdout.write(`wrote ${file}: fill in your implementation's URLs, then run \`svc-conformance run --targets ${file}\`\n`);
      ctx.setCode(EXIT_PASS);
    });
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
