// What a suite declares to `run`: the target options it adds (shortcuts for its role in a
// targets file), how it prepares a run against an outside implementation, and how `--reference`
// launches the reference implementation for it. Types only: harness/suites/registry.ts lists them.
import type { Command } from 'commander';
import type { Profile } from '../../protocol/common/profile.ts';
import type { AuthorityControl } from '../actors/authority/types.ts';
import type { ClusterEngine } from '../run/cluster.ts';
import type { ExpectedFailures } from '../run/expected.ts';
import type { SuiteLoad } from '../run/model.ts';
import type { Targets } from '../targets/file.ts';

/** A suite ready to run: its checks load on demand; `stop` ends whatever was started for it. */
export interface PreparedSuite {
  suite: string;
  load(): Promise<SuiteLoad>;
  /** Its project-profile checks gate the run. */
  profileGates: boolean;
  expectedFailures?: ExpectedFailures;
  /** Per-check time limit (ms) the target asks for. */
  checkTimeoutMs?: number;
  /** What goes into the report's config. */
  config: Record<string, unknown>;
  /** One line for the operator (what runs where). */
  banner?: string;
  stop(): Promise<void>;
}

export interface ExternalInput {
  /** Every parsed `run` flag (each suite reads its own). */
  flags: Record<string, unknown>;
  file: Targets;
  profile: Profile;
  /** The test authority: the same client for every suite, checked to serve `profile`'s name. */
  authority(): Promise<AuthorityControl>;
}

export interface ReferenceInput {
  flags: Record<string, unknown>;
  profile: Profile;
  log?: (line: string) => void;
}

export interface SuiteDefinition {
  name: string;
  /** One line for `run --help`. */
  title: string;
  options(cmd: Command): void;
  /** The flags that only make sense with --reference (refused without it). */
  referenceFlags: string[];
  /** The engines its reference needs with --cluster (harness/run/cluster.ts); none: it runs as usual. */
  clusterEngines?: readonly ClusterEngine[];
  /** A run against an outside implementation, or undefined when neither flags nor file describe this role. */
  external(input: ExternalInput): Promise<PreparedSuite | undefined>;
  reference(input: ReferenceInput): Promise<PreparedSuite>;
}
