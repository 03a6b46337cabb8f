// What the `drive` subcommands share (drive.ts builds it, drive-share.ts takes it): the common
// flags, an opened drive, and the helpers that open one. Types only, so the subcommand modules and
// the command that registers them do not import each other.
import type { Command } from 'commander';
import type { CommandContext } from '../actors/command-context.ts';
import type { DriveClient } from '../actors/drive/client.ts';
import type { DriveTree, Opened } from '../actors/drive/tree.ts';
import type { RelayIdentity } from '../actors/relay/index.ts';

export interface Common {
  key?: string;
  relay?: string;
  drive?: string;
  share?: string;
  serviceName: string;
}

/** The caller's view of a drive: the tree, where paths start, and who signs. */
export interface Session {
  tree: DriveTree;
  id?: RelayIdentity;
  /** The root (owner, undefined before the first write) or the shared node. */
  start?: Opened;
  owner: boolean;
}

/** What the drive subcommands share: the parent command, output, and opening a drive. */
export interface DriveKit {
  drive: Command;
  io: CommandContext['io'];
  run: (label: string, body: () => Promise<number>) => () => Promise<void>;
  /** Adds the options every keyed drive command takes. */
  keyed: (cmd: Command, keyRequired?: boolean) => Command;
  /** Opens the drive as the key file's identity; `pick` false leaves a member's share unpicked. */
  session: (flags: Common, pick?: boolean) => Promise<Session>;
  /** The node at `path`, or the session's start. */
  at: (s: Session, path: string | undefined) => Promise<Opened>;
  httpClient: (relay: string, serviceName: string) => Promise<DriveClient>;
}
