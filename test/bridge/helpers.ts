// Helpers for the bridge tests: a reference bridge (child process) with its test authority and
// the harness's clients, optionally broken or the document-only variant, and the `run` command
// line that points the bridge suite at it as at any outside bridge.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { profileFor } from '../../protocol/common/profile.ts';
import { REFERENCE_LIFETIMES, REFERENCE_PUSH_INTERVAL_S, startBridgeReference, type BridgeReferenceRun } from '../../harness/suites/bridge/launch.ts';

export { runCli } from '../rp/helpers.ts';

/** A reference bridge; `args` may carry the hidden --break/--variant flags, `env` a wire variant (both allowed here by env); `tls`: served over https on a name. */
export function bridge(args: string[] = [], env: NodeJS.ProcessEnv = {}, options: { push?: boolean; tls?: boolean } = {}): Promise<BridgeReferenceRun> {
  return startBridgeReference({
    profile: profileFor(),
    ...REFERENCE_LIFETIMES,
    ...(options.push ? { pushIntervalS: REFERENCE_PUSH_INTERVAL_S } : {}),
    ...(options.tls ? { tls: true } : {}),
    extraArgs: args,
    env: { SVC_REFERENCE_ALLOW_BREAKAGE: '1', ...env },
  });
}

/** `run --suite bridge` against `run` as an outside bridge: flags, a clients file, the rotation hook. */
export async function suiteArgs(run: BridgeReferenceRun, extra: string[] = []): Promise<string[]> {
  // Beside the run's data directory: removed with it when the run stops.
  const clients = join(dirname(run.dataDir), `suite-clients-${randomBytes(4).toString('hex')}.json`);
  await writeFile(clients, JSON.stringify(run.target.clients));
  return [
    'run',
    '--suite',
    'bridge',
    '--bridge',
    run.target.issuer,
    '--bridge-clients',
    clients,
    '--bridge-rotate-url',
    run.target.rotate!.url,
    '--bridge-rotate-token',
    run.target.rotate!.token!,
    '--bridge-suspend-url',
    run.target.suspend!.url,
    '--bridge-suspend-token',
    run.target.suspend!.token!,
    '--bridge-url-clients',
    'on',
    ...(run.target.declared?.codeLifetimeS !== undefined ? ['--bridge-code-lifetime', String(run.target.declared.codeLifetimeS)] : []),
    ...(run.target.declared?.transactionLifetimeS !== undefined ? ['--bridge-transaction-lifetime', String(run.target.declared.transactionLifetimeS)] : []),
    ...(run.target.declared?.transactionExtensionS !== undefined ? ['--bridge-transaction-extension', String(run.target.declared.transactionExtensionS)] : []),
    ...(run.target.declared?.transactionCapS !== undefined ? ['--bridge-transaction-cap', String(run.target.declared.transactionCapS)] : []),
    ...(run.target.declared?.resumeLifetimeS !== undefined ? ['--bridge-resume-lifetime', String(run.target.declared.resumeLifetimeS)] : []),
    ...(run.target.declared?.accessTokenLifetimeS !== undefined ? ['--bridge-access-token-lifetime', String(run.target.declared.accessTokenLifetimeS)] : []),
    ...(run.target.declared?.pushIntervalS !== undefined ? ['--bridge-push-interval', String(run.target.declared.pushIntervalS)] : []),
    ...(run.target.push ? ['--bridge-push-user-relay', run.target.push.userRelay] : []),
    '--authority',
    run.authority.adminUrl,
    '--runs',
    '10',
    '--seed',
    '7',
    ...extra,
  ];
}
