// DNS mode of POST /identities (ra.identities.dns-mode): the relay writes the identity's records
// through the DNS provider the registrant names, with the scoped token the registrant gives. Two
// providers, behind one interface: Cloudflare (API v4) and deSEC. Their HTTP APIs are third-party
// services: the tests drive them mocked with msw. A failure is 502 dns_write_failed with detail.
import { isIP } from 'node:net';

export interface DnsRecord {
  type: 'TXT' | 'A' | 'CNAME';
  /** Fully qualified, no trailing dot. */
  name: string;
  value: string;
}

export interface DnsProvider {
  name: string;
  write(records: readonly DnsRecord[], token: string): Promise<void>;
}

export class DnsWriteError extends Error {}

/** The records of document 3 for `identity` pointing at `relayHost` (up to three). */
export function recordsFor(
  profileIds: { dns_txt_label: string; dns_enc_label: string; txt_pubkey_prefix: string; txt_enckey_prefix: string },
  identity: string,
  publicKey: string,
  encryptionKey: string | undefined,
  relayHost: string,
): DnsRecord[] {
  const records: DnsRecord[] = [{ type: 'TXT', name: `${profileIds.dns_txt_label}.${identity}`, value: `${profileIds.txt_pubkey_prefix}${publicKey}` }];
  if (encryptionKey) records.push({ type: 'TXT', name: `${profileIds.dns_enc_label}.${identity}`, value: `${profileIds.txt_enckey_prefix}${encryptionKey}` });
  records.push(isIP(relayHost) === 4 ? { type: 'A', name: identity, value: relayHost } : { type: 'CNAME', name: identity, value: relayHost });
  return records;
}

/** Parent names of `name`, longest first (the zone is one of them). */
const parents = (name: string): string[] =>
  name
    .split('.')
    .map((_, i, labels) => labels.slice(i).join('.'))
    .filter((n) => n.includes('.'));

async function call(url: string, init: RequestInit, what: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new DnsWriteError(`${what}: ${(error as Error).message}`);
  }
  const text = await res.text();
  if (!res.ok) throw new DnsWriteError(`${what}: ${res.status} ${text.slice(0, 200)}`);
  try {
    return text === '' ? {} : JSON.parse(text);
  } catch {
    throw new DnsWriteError(`${what}: not JSON`);
  }
}

export function cloudflare(base = 'https://api.cloudflare.com/client/v4'): DnsProvider {
  return {
    name: 'cloudflare',
    async write(records, token) {
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      let zoneId: string | undefined;
      for (const candidate of parents(records[0]!.name)) {
        const found = (await call(`${base}/zones?name=${encodeURIComponent(candidate)}`, { headers }, 'cloudflare zone lookup')) as { result?: Array<{ id?: string }> };
        zoneId = found.result?.[0]?.id;
        if (zoneId) break;
      }
      if (!zoneId) throw new DnsWriteError('cloudflare: no zone of this token holds the identity');
      for (const r of records) {
        await call(
          `${base}/zones/${zoneId}/dns_records`,
          { method: 'POST', headers, body: JSON.stringify({ type: r.type, name: r.name, content: r.value, ttl: 300 }) },
          `cloudflare ${r.type} ${r.name}`,
        );
      }
    },
  };
}

export function desec(base = 'https://desec.io/api/v1'): DnsProvider {
  return {
    name: 'desec',
    async write(records, token) {
      const headers = { authorization: `Token ${token}`, 'content-type': 'application/json' };
      let domain: string | undefined;
      for (const candidate of parents(records[0]!.name)) {
        try {
          await call(`${base}/domains/${candidate}/`, { headers }, 'desec domain lookup');
          domain = candidate;
          break;
        } catch {
          // not this one
        }
      }
      if (!domain) throw new DnsWriteError('desec: no domain of this token holds the identity');
      const rrsets = records.map((r) => ({
        subname: r.name === domain ? '' : r.name.slice(0, -domain!.length - 1),
        type: r.type,
        ttl: 3600,
        records: [r.type === 'TXT' ? JSON.stringify(r.value) : r.type === 'CNAME' ? `${r.value}.` : r.value],
      }));
      await call(`${base}/domains/${domain}/rrsets/`, { method: 'PUT', headers, body: JSON.stringify(rrsets) }, 'desec rrsets');
    },
  };
}

export class DnsProviders {
  readonly #providers: Map<string, DnsProvider>;

  constructor(providers: readonly DnsProvider[] = [cloudflare(), desec()]) {
    this.#providers = new Map(providers.map((p) => [p.name, p]));
  }

  get(name: string): DnsProvider | undefined {
    return this.#providers.get(name);
  }

  names(): string[] {
    return [...this.#providers.keys()];
  }
}
