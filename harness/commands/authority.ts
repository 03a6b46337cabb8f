// `svc-conformance authority`: runs the test identity authority (DNS, HTTPS well-known host, admin
// API) on a loopback address until interrupted, and prints how to point an RP at it.
import { InvalidArgumentError, type Command } from 'commander';
import { isIPv4 } from 'node:net';
import type { CommandContext } from '../actors/command-context.ts';
import { DEFAULT_SERVICE_NAME } from '../../protocol/common/profile.ts';

const EXAMPLES = `
The authority answers, for every identity published to it (service name svc):
  TXT _svc.<id>      svc-pubkey=ed25519:<key>     TXT _svc-enc.<id>  svc-enckey=x25519:<key>
  A   <id>           the authority's address      HTTPS https://<id>/.well-known/svc/id.json
Unknown names answer NXDOMAIN. TTL 0 and Cache-Control: no-store by default, so key rotation is
seen at once. It also serves files at any host and path (POST /files on the admin API: a URL
client's document, a key set), over HTTPS, over plain HTTP, and from a second loopback address
(otherAddress in GET /info) that a bridge must treat as private. Ports 53, 80 and 443 need root
(or CAP_NET_BIND_SERVICE); use --dns-port/--https-port/--http-port otherwise (an RP then needs to
reach HTTPS on that port).

Examples:
  $ svc-conformance authority --dir .authority
  $ svc-reference rp --dns-server 127.0.88.1:53 --ca .authority/ca.pem
  $ svc-conformance signer keygen --identity alice.id.test --out alice.json
  $ svc-conformance signer publish --key alice.json --authority http://127.0.88.1:8055
`;

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('not a port number');
  return Number(value);
}

function nonNegative(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('not a non-negative integer');
  return Number(value);
}

function loopback(value: string): string {
  if (!isIPv4(value) || !value.startsWith('127.')) throw new InvalidArgumentError('must be an IPv4 loopback address (127.x.y.z)');
  return value;
}

interface AuthorityFlags {
  address: string;
  dir?: string;
  dnsPort: number;
  httpsPort: number;
  httpPort: number;
  adminPort: number;
  ttl: number;
  serviceName: string;
  zone: string;
}

export function registerAuthorityCommand(program: Command, ctx: CommandContext): void {
  ctx
    .configure(program.command('authority'))
    .description('run a test identity authority (DNS + HTTPS well-known host + admin API) until interrupted')
    .option('--address <ip>', 'loopback address to bind', loopback, '127.0.88.1')
    .option('--dir <dir>', 'keep the CA here (ca.pem, ca-key.pem) so a restarted authority stays trusted (default: a temp dir)')
    .option('--dns-port <n>', 'DNS port (UDP and TCP)', port, 53)
    .option('--https-port <n>', 'HTTPS port of the well-known host', port, 443)
    .option('--http-port <n>', 'plain HTTP port for hosted files', port, 80)
    .option('--admin-port <n>', 'admin API port (HTTP, JSON)', port, 8055)
    .option('--ttl <seconds>', 'TTL of DNS answers', nonNegative, 0)
    .option('--zone <zone>', 'zone of identities created through the admin API', 'id.test')
    .option('--service-name <name>', 'the profile name (svc, poweur, ...)', DEFAULT_SERVICE_NAME)
    .addHelpText('after', EXAMPLES)
    .action(async (flags: AuthorityFlags) => {
      const { io } = ctx;
      const { profileFor } = await import('../../protocol/common/profile.ts');
      const { startAuthority } = await import('../actors/authority/index.ts');
      const { untilInterrupted } = await import('../actors/command-context.ts');
      const profile = profileFor(flags.serviceName);
      let authority;
      try {
        authority = await startAuthority({
          profile,
          address: flags.address,
          dnsPort: flags.dnsPort,
          httpsPort: flags.httpsPort,
          httpPort: flags.httpPort,
          adminPort: flags.adminPort,
          ttl: flags.ttl,
          zone: flags.zone,
          ...(flags.dir ? { dir: flags.dir } : {}),
        });
      } catch (error) {
        io.stderr.write(`svc-conformance authority: cannot start on ${flags.address}: ${(error as Error).message}\n`);
        ctx.setCode(2);
        return;
      }
      const https = authority.httpsPort === 443 ? '' : `:${authority.httpsPort}`;
      io.stdout.write(
        [
          `svc-conformance authority running on ${authority.address} (service name ${profile.name})`,
          `  DNS server   ${authority.dnsServer} (UDP and TCP, TTL ${flags.ttl})`,
          `  HTTPS        https://<identity>${https}${profile.ids.id_document_path} on ${authority.address}:${authority.httpsPort}`,
          `  files        any https://<host>${https}/<path> (POST /files), also on ${authority.otherAddress} and over http on port ${authority.httpPort}`,
          `  CA file      ${authority.caFile}${flags.dir ? '' : ' (temporary: pass --dir to keep it)'}`,
          `  admin API    ${authority.adminUrl}`,
          '',
          'Point the reference RP at it:',
          `  svc-reference rp --dns-server ${authority.dnsServer} --ca ${authority.caFile}`,
          'Another RP: send its DNS queries to the DNS server above and trust the CA file for HTTPS.',
          '',
          'Publish a key:',
          `  svc-conformance signer keygen --identity alice.${flags.zone} --out alice.json`,
          `  svc-conformance signer publish --key alice.json --authority ${authority.adminUrl}`,
          '',
          'Press Ctrl-C to stop.',
          '',
        ].join('\n'),
      );
      const why = await untilInterrupted(io.signal);
      await authority.close();
      io.stderr.write(`svc-conformance authority: stopped (${why})\n`);
      ctx.setCode(0);
    });
}
