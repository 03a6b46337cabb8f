// Pieces of the bridge bench: node-oidc-provider as a peer process (./peers/oidc-provider.ts),
// `/token` redemption requests serialized for the load generator, and raw RS256 signatures per
// second on this machine (the physical limit of an endpoint that signs one ID token per call).
import { spawn, type ChildProcess } from 'node:child_process';
import { constants, generateKeyPairSync, sign } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { serialize } from './loadgen.ts';

const PEER = fileURLToPath(new URL('./peers/oidc-provider.ts', import.meta.url));
const PEER_LINE = 'bench-peer-ready ';

export interface TokenClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface CodeSource {
  /** http://host:port of the server answering /token. */
  url: string;
  /** Its token endpoint path. */
  tokenPath: string;
  codes: string[];
  verifier: string;
  client: TokenClient;
}

export interface Peer extends CodeSource {
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** Starts node-oidc-provider in its own process with `codes` authorization codes minted. */
export function startOidcProviderPeer(codes: number): Promise<Peer> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', PEER], { env: { ...process.env, BENCH_CODES: String(codes) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const stop = () =>
      new Promise<void>((done) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return done();
        proc.once('exit', () => done());
        proc.kill('SIGKILL');
      });
    proc.stderr!.on('data', (d: Buffer) => void (err += d.toString()));
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith(PEER_LINE) && out.includes(`${l}\n`));
      if (!line) return;
      const info = JSON.parse(line.slice(PEER_LINE.length)) as Omit<CodeSource, 'tokenPath'>;
      resolve({ ...info, tokenPath: '/token', proc, stop });
    });
    proc.once('exit', (code) => reject(new Error(`the oidc-provider peer exited (${code}) before it was ready: ${err.slice(-500)}`)));
  });
}

/** One authorization_code redemption per code, client_secret_basic, PKCE verifier: serialized requests. */
export function tokenRequests(source: CodeSource): Buffer[] {
  const { host } = new URL(source.url);
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(source.client.client_id)}:${encodeURIComponent(source.client.client_secret)}`).toString('base64')}`;
  return source.codes.map((code) =>
    serialize(host, {
      method: 'POST',
      path: source.tokenPath,
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: source.client.redirect_uris[0]!, code_verifier: source.verifier }).toString(),
    }),
  );
}

/** RS256 (RSASSA-PKCS1-v1_5, SHA-256) signatures per second with a 2048-bit key, one thread. */
export function rawRs256PerSecond(seconds = 2): number {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const data = Buffer.from('eyJhbGciOiJSUzI1NiJ9.'.padEnd(400, 'x'));
  for (let i = 0; i < 50; i++) sign('sha256', data, { key: privateKey, padding: constants.RSA_PKCS1_PADDING });
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    for (let i = 0; i < 20; i++) sign('sha256', data, { key: privateKey, padding: constants.RSA_PKCS1_PADDING });
    n += 20;
  }
  return n / ((performance.now() - t0) / 1000);
}
