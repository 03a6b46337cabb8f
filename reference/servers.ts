// What `svc-reference` knows about a server: its name, a one-line summary, and how it registers
// its subcommand (flags, help, start). Each server defines itself in its own folder.
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { profileFor } from '../protocol/common/profile.ts';
import { normalizeOrigin } from '../protocol/common/url.ts';
import { parseNonceStoreSpec } from './stores/index.ts';
import type { TlsFiles } from './shared/server.ts';

export interface ReferenceIO {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  /** Stops a running server like SIGINT does (tests). */
  signal?: AbortSignal;
}

/** A running server: what the entry point closes on SIGINT/SIGTERM. */
export interface RunningServer {
  close(): Promise<void>;
}

export interface Started {
  code: number;
  running?: RunningServer;
}

export interface ServerDefinition {
  name: string;
  summary: string;
  register(program: Command, io: ReferenceIO, setResult: (result: Started) => void): void;
}

// ---- flag parsers shared by the servers ----

const arg = <T>(fn: () => T): T => {
  try {
    return fn();
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
};
export const port = (v: string) =>
  arg(() => {
    if (!/^\d+$/.test(v) || Number(v) > 65535) throw new Error('a port is 0 to 65535');
    return Number(v);
  });
export const positive = (v: string) =>
  arg(() => {
    if (!/^\d+$/.test(v) || Number(v) === 0) throw new Error('expected a positive integer');
    return Number(v);
  });
/** A positive integer at most `max`. */
export const upTo = (max: number) => (v: string) =>
  arg(() => {
    if (!/^\d+$/.test(v) || Number(v) === 0 || Number(v) > max) throw new Error(`expected an integer from 1 to ${max}`);
    return Number(v);
  });
export const origin = (v: string) =>
  arg(() => {
    const o = normalizeOrigin(v);
    if (!o) throw new Error('expected an origin: scheme://host[:port], no path');
    return o;
  });
export const hostPort = (v: string) =>
  arg(() => {
    if (!/^(\[[0-9a-fA-F:.]+\]|[^:\s]+)(:\d{1,5})?$/.test(v)) throw new Error('expected HOST:PORT');
    return v;
  });
export const nonceStore = (v: string) =>
  arg(() => {
    parseNonceStoreSpec(v);
    return v;
  });
export const serviceName = (v: string) => arg(() => profileFor(v).name);
export const httpUrl = (v: string) =>
  arg(() => {
    const u = new URL(v);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('expected an http(s) URL');
    return v.replace(/\/+$/, '');
  });

/** --tls-cert and --tls-key (PEM files) go together; with neither the server speaks plain http. */
export function readTls(cert: string | undefined, key: string | undefined): TlsFiles | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) throw new TypeError('--tls-cert and --tls-key go together');
  return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
}
