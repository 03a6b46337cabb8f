// Every suite's checks, listed without a server: each suite's builder runs against a placeholder
// target shaped like the one `run --reference` gives it (every optional part present, so every
// check is listed), whose authority refuses to be touched. A check factory may read the target's
// plain fields while it builds; it must do no I/O until a check runs, and this proves it: an
// authority call, or any request to the placeholder's unroutable addresses, fails the listing.
import { profileFor } from '../../protocol/common/profile.ts';
import { limits } from '../../schemas/ts/limits.ts';
import type { AuthorityControl } from '../actors/authority/types.ts';
import type { Check } from '../run/model.ts';
import { bridgeChecks } from '../suites/bridge/index.ts';
import { CLIENT_ROLES } from '../suites/bridge/driver.ts';
import { driveChecks } from '../suites/drive/index.ts';
import { REFERENCE_DECLARED } from '../suites/relay/launch.ts';
import { relayChecks } from '../suites/relay/index.ts';
import { REFERENCE_RESUME_TTL_S } from '../suites/rp/launch.ts';
import { rpChecks } from '../suites/rp/index.ts';
import { defaultVectorDir, vectorSuite } from '../suites/vectors/index.ts';

// .invalid never resolves (RFC 6761): a request a factory made would fail, not reach anyone.
const HOST = 'http://matrix.invalid';

/** An authority any use of which throws: building a check must not call it. */
function untouchableAuthority(): AuthorityControl {
  return new Proxy({} as AuthorityControl, {
    get(_target, property) {
      // Promise resolution probes `then`: answer as a plain object does.
      if (property === 'then') return undefined;
      throw new Error(`a check factory used the authority (${String(property)}) while building its checks: construction must do no I/O; build lazily, in run()`);
    },
  });
}

/** Every check of every suite, in suite order (vectors, rp, bridge, relay, drive). */
export async function listChecks(): Promise<Check[]> {
  const profile = profileFor();
  const authority = untouchableAuthority();
  const relayTarget = {
    profile,
    url: `${HOST}:1`,
    peerUrl: `${HOST}:2`,
    authority,
    requestTimeoutMs: 20_000,
    declared: { ...REFERENCE_DECLARED },
    restart: async () => undefined,
  };
  const vectors = await vectorSuite({ dirs: [defaultVectorDir], serviceName: profile.name });
  return [
    ...vectors.checks,
    ...rpChecks({
      profile,
      origin: `${HOST}:3`,
      startUrl: `${HOST}:3/login`,
      loginPage: { url: `${HOST}:3/login`, explicit: true },
      processes: [`${HOST}:3`, `${HOST}:4`],
      authority,
      brokenStore: { origin: `${HOST}:5`, startUrl: `${HOST}:5/login` },
      requestTimeoutMs: 20_000,
      declared: { resumeCodeLifetimeS: REFERENCE_RESUME_TTL_S, deliveryBodyMaxBytes: limits.rp_delivery_body_max_bytes },
    }),
    ...bridgeChecks({
      profile,
      issuer: `${HOST}:6`,
      // Every client kind the reference registers: a check's cells follow the kinds declared.
      clients: {
        ...Object.fromEntries(CLIENT_ROLES.map((role) => [role, { client_id: `matrix-${role}`, redirect_uri: `${HOST}:7/cb`, client_secret: 'x' }])),
        basic: { client_id: 'matrix-basic', redirect_uri: `${HOST}:7/cb`, client_secret: 'x' },
        public: { client_id: 'matrix-public', redirect_uri: `${HOST}:7/cb` },
      },
      authority,
      rotate: { url: `${HOST}:6/operator/keys/rotate` },
      suspend: { url: `${HOST}:6/operator/clients/suspend` },
      urlClients: 'on',
      requestTimeoutMs: 20_000,
      push: { userRelay: `${HOST}:8` },
    }),
    ...relayChecks(relayTarget),
    ...driveChecks(relayTarget),
  ];
}
