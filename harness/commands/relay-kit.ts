// What the `relay` subcommands share (relay.ts builds it, relay-owner.ts takes it). Types only, so
// the subcommand modules and the command that registers them do not import each other.
import type { Command } from 'commander';
import type { CommandContext } from '../actors/command-context.ts';
import type { RelayClient, RelayIdentity } from '../actors/relay/index.ts';

/** What the relay subcommands share: the parent command, output, and key/client loaders. */
export interface RelayKit {
  relay: Command;
  io: CommandContext['io'];
  run: (label: string, body: () => Promise<number>) => () => Promise<void>;
  load: (file: string) => Promise<RelayIdentity>;
  client: (url: string, service: string) => Promise<RelayClient>;
  refused: (what: string, r: { status: number; text(): string }) => number;
}
