// Real DNS queries through node:dns (c-ares): TXT for the key record, A/AAAA for the HTTPS host.
// With --dns-server every query goes to that server (Resolver.setServers), which is how the RP
// is pointed at a test identity authority. Never a hand-made packet.
import { Resolver } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';

export interface DnsOptions {
  /** `HOST:PORT` or `HOST` (port 53); undefined uses the system's servers. */
  server?: string;
  timeoutMs: number;
}

/** Codes that mean "this name has no such record", as opposed to "DNS did not answer". */
export const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'ENONAME']);

export function dnsErrorCode(error: unknown): string {
  return (error as { code?: string })?.code ?? 'EUNKNOWN';
}

export class Dns {
  readonly #resolver: Resolver;
  readonly #custom: boolean;

  constructor(options: DnsOptions) {
    // Two tries within the budget (c-ares doubles the wait for the retry: t + 2t): one datagram
    // answered late, or lost, costs a retry rather than the lookup.
    this.#resolver = new Resolver({ timeout: Math.max(1, Math.floor(options.timeoutMs / 3)), tries: 2 });
    this.#custom = options.server !== undefined;
    if (options.server !== undefined) this.#resolver.setServers([options.server]);
  }

  /** TXT strings of `name` (each record's chunks joined); [] when the name has none. */
  async txt(name: string): Promise<string[]> {
    try {
      return (await this.#resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch (error) {
      if (NO_RECORD.has(dnsErrorCode(error))) return [];
      throw error;
    }
  }

  /** Addresses of `host` (A, then AAAA); [] when it has none. */
  async addresses(host: string): Promise<LookupAddress[]> {
    const out: LookupAddress[] = [];
    for (const [family, query] of [
      [4, () => this.#resolver.resolve4(host)],
      [6, () => this.#resolver.resolve6(host)],
    ] as const) {
      try {
        for (const address of await query()) out.push({ address, family });
      } catch (error) {
        if (!NO_RECORD.has(dnsErrorCode(error))) throw error;
      }
    }
    return out;
  }

  /** A `net.connect` lookup function answering from this resolver (only used with --dns-server). */
  lookup(): ((hostname: string, options: { all?: boolean } | number, callback: (...args: unknown[]) => void) => void) | undefined {
    if (!this.#custom) return undefined;
    return (hostname, options, callback) => {
      this.addresses(hostname).then(
        (found) => {
          if (found.length === 0) {
            const error = Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND', hostname });
            callback(error);
            return;
          }
          if (typeof options === 'object' && options.all) callback(null, found);
          else callback(null, found[0]!.address, found[0]!.family);
        },
        (error: unknown) => callback(error),
      );
    };
  }
}
