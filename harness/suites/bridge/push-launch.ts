// The relays behind push to the app in `run --reference --suite bridge`: the bridge's own relay
// (where its service ID lives) and the users' relay (where the harness, as the user's app, reads
// its prompts), both reference relays resolving through the suite's test authority. The bridge's
// key goes into a push home directory, and its push command is this harness's own
// `svc-conformance relay send` (document 2's OAUTH_PUSH_CLI names such a command).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Profile } from '../../../protocol/common/profile.ts';
import { encodeBase64url } from '../../../protocol/common/base64.ts';
import { HttpClient } from '../../actors/http.ts';
import type { Authority } from '../../actors/authority/index.ts';
import { newRelayIdentity, RelayClient } from '../../actors/relay/index.ts';
import { writeRelayKey } from '../../actors/relay/keyfile.ts';
import { REFERENCE_RESOLVER_TIMEOUT_MS, spawnReference, type ReferenceChild } from '../../run/spawn.ts';
import { ConfigError } from '../../run/exit.ts';

const HARNESS_BIN = fileURLToPath(new URL('../../../bin/svc-conformance.js', import.meta.url));
const BRIDGE_DOMAIN = 'bridge.relay.test';
const USERS_DOMAIN = 'app.relay.test';
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export interface PushRelays {
  /** The users' relay: the harness registers each push user there (bridge.push.user_relay). */
  userRelay: string;
  /** The bridge's flags: --push-identity, --push-home, --push-cli. */
  bridgeArgs: string[];
}

/** Starts both relays (children pushed to `children` as they start) and provisions the bridge's service ID. */
export async function startPushRelays(o: { profile: Profile; authority: Authority; dir: string; log?: (line: string) => void; children: ReferenceChild[] }): Promise<PushRelays> {
  const common = [
    '--port',
    '0',
    '--dns-server',
    o.authority.dnsServer,
    '--ca',
    o.authority.caFile,
    '--service-name',
    o.profile.name,
    '--resolver-timeout',
    String(REFERENCE_RESOLVER_TIMEOUT_MS),
    '--quiet',
  ];
  const relay = (name: string, domain: string) =>
    spawnReference('relay', [...common, '--data-dir', join(o.dir, name), '--hosted-domains', domain], { ...(o.log ? { log: o.log } : {}), onSpawn: (c) => void o.children.push(c) });
  const [bridgeRelay, userRelay] = await Promise.all([relay('bridge-relay', BRIDGE_DOMAIN), relay('user-relay', USERS_DOMAIN)]);
  const id = newRelayIdentity(`oidc-bridge.${BRIDGE_DOMAIN}`);
  const http = new HttpClient({ timeoutMs: 20_000 });
  try {
    const address = new URL(bridgeRelay.url).host;
    const r = await new RelayClient(o.profile, bridgeRelay.url, http).register(id, address);
    if (r.status !== 201) throw new ConfigError(`registering the bridge's push identity at its relay answered ${r.status} ${r.text().slice(0, 200)}`);
    await o.authority.publish({ identity: id.identity, seed: id.seed, encryptionPublicKey: `x25519:${encodeBase64url(id.encryption.publicKey)}`, relay: address });
  } finally {
    await http.close();
  }
  const home = join(o.dir, 'push-home');
  await mkdir(home, { recursive: true });
  await writeRelayKey(join(home, 'key.json'), id);
  const cli = [process.execPath, HARNESS_BIN, 'relay', 'send', '--relay', bridgeRelay.url, '--authority', o.authority.adminUrl, '--service-name', o.profile.name].map(quote).join(' ');
  return { userRelay: userRelay.url, bridgeArgs: ['--push-identity', id.identity, '--push-home', home, '--push-cli', cli] };
}
