// Replay hints: the exact command that reproduces one property failure.

/** Options that the hint sets itself, so they are dropped from the original command line. */
const REPLACED = new Set(['--seed', '--replay', '--check']);

/** Quotes an argument for a POSIX shell only when it needs it. */
export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * The user's command line minus --seed/--replay/--check (in `--opt value` and `--opt=value` form).
 * `args` are the arguments after the program name.
 */
export function baseCommandLine(args: readonly string[], program = 'svc-conformance'): string {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const name = arg.split('=', 1)[0]!;
    if (REPLACED.has(name)) {
      if (!arg.includes('=')) i++;
      continue;
    }
    kept.push(arg);
  }
  return [program, ...kept].map(shellQuote).join(' ');
}

export function replayCommand(commandLine: string | undefined, seed: number, path: string, checkId: string): string {
  return `${commandLine ?? 'svc-conformance'} --seed ${seed} --replay ${shellQuote(path)} --check ${shellQuote(checkId)}`;
}
