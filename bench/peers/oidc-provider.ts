// The bridge bench's peer, run as its own process like the bridge it is compared with:
// node-oidc-provider (panva) with one confidential client (client_secret_basic), PKCE required,
// RS256 ID tokens under a 2048-bit key. Before any load it mints `BENCH_CODES` authorization
// codes through the provider's own models (a Grant and an AuthorizationCode each, as its
// interaction flow would leave them), prints one JSON line {url, codes, verifier, client}, and
// then serves until killed. Its storage is a plain in-memory adapter (the bundled development
// adapter is an LRU that would evict the minted codes): the peer keeps nothing durable, which
// favours it.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** The prefix of the one line the parent reads. */
export const PEER_LINE = 'bench-peer-ready ';
const N = Number(process.env.BENCH_CODES ?? 6000);
const CLIENT = { client_id: 'bench', client_secret: 'bench-secret-'.padEnd(43, 'x'), redirect_uris: ['https://client.example/cb'] };

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'bench', alg: 'RS256', use: 'sig' };

type Payload = Record<string, unknown> & { grantId?: string; userCode?: string; uid?: string; consumed?: number };
const stores = new Map<string, Map<string, Payload>>();
/** oidc-provider's adapter interface over one Map per model; expiry is not needed for a bench run. */
class MemoryAdapter {
  readonly #items: Map<string, Payload>;
  constructor(model: string) {
    this.#items = stores.get(model) ?? new Map();
    stores.set(model, this.#items);
  }
  async upsert(id: string, payload: Payload) {
    this.#items.set(id, payload);
  }
  async find(id: string) {
    return this.#items.get(id);
  }
  async findByUserCode(userCode: string) {
    return [...this.#items.values()].find((p) => p.userCode === userCode);
  }
  async findByUid(uid: string) {
    return [...this.#items.values()].find((p) => p.uid === uid);
  }
  async consume(id: string) {
    const p = this.#items.get(id);
    if (p) p.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    this.#items.delete(id);
  }
  async revokeByGrantId(grantId: string) {
    for (const items of stores.values()) for (const [id, p] of items) if (p.grantId === grantId) items.delete(id);
  }
}

const server = createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const provider = new Provider(url, {
  clients: [{ ...CLIENT, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic', id_token_signed_response_alg: 'RS256' }],
  jwks: { keys: [jwk] },
  adapter: MemoryAdapter,
  pkce: { required: () => true },
  features: { devInteractions: { enabled: false } },
  ttl: { AuthorizationCode: 600, Grant: 3600, IdToken: 3600, AccessToken: 3600 },
  findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
});
server.on('request', provider.callback());

const verifier = randomBytes(32).toString('base64url');
const challenge = createHash('sha256').update(verifier).digest('base64url');
const client = await provider.Client.find(CLIENT.client_id);
if (!client) throw new Error('the bench client did not load');
const codes: string[] = [];
for (let i = 0; i < N; i++) {
  const grant = new provider.Grant({ accountId: `user-${i}`, clientId: CLIENT.client_id });
  grant.addOIDCScope('openid');
  const grantId = await grant.save();
  const code = new provider.AuthorizationCode({
    accountId: `user-${i}`,
    client,
    grantId,
    scope: 'openid',
    redirectUri: CLIENT.redirect_uris[0],
    codeChallenge: challenge,
    codeChallengeMethod: 'S256',
    authTime: Math.floor(Date.now() / 1000),
    gty: 'authorization_code',
  });
  codes.push(await code.save());
}
// oidc-provider prints its own notices on stdout: the parent reads only the marked line.
process.stdout.write(`${PEER_LINE}${JSON.stringify({ url, codes, verifier, client: CLIENT })}\n`);
