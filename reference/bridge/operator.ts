// `svc-oauth`: the bridge's operator commands (document 2, Endpoints: "Operator commands (not
// HTTP)"). They act on the bridge's database directly, so they work with the bridge running:
//   keys rotate              a new signing key; the previous one stays published (ob.keys.rotation)
//   clients suspend <id>     stops an application at once (running bridges pick it up within a second)
//   hash-secret [secret]     a new 256-bit client secret (or the given one) and its SHA-256 for the static file
//   backup <file>            a consistent copy of the database as one SQLite file (keys, pairwise secret, clients,
//                            consents, ...), from SQLite or PostgreSQL (backup.ts)
//   restore <file>           puts a backup in place under --data-dir, or loads it into --database (bridge stopped)
// Restoring a backup gives the same subjects (pairwise secret) and key ids (signing keys).
import { copyFile, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { openDatabase } from '../stores/sqlite.ts';
import { SqliteSql, type Sql } from '../stores/sql.ts';
import { PostgresSql } from '../stores/postgres.ts';
import { hashSecret, newSecret } from '../shared/secrets.ts';
import { BridgeStore } from './store.ts';
import { SigningKeys } from './keys.ts';
import { backupPostgres, restorePostgres } from './backup.ts';

/** A database URL without its password, for messages. */
const redact = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');

export interface OperatorIO {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

interface DbFlags {
  dataDir: string;
  database?: string;
}

const DB_FILE = 'bridge.sqlite';

function openSql(flags: DbFlags): Sql {
  if (flags.database !== undefined && /^postgres(ql)?:\/\//.test(flags.database)) return new PostgresSql(flags.database);
  return new SqliteSql(openDatabase(flags.dataDir, DB_FILE), true);
}

async function withStore<T>(flags: DbFlags, fn: (store: BridgeStore) => Promise<T>): Promise<T> {
  const sql = openSql(flags);
  try {
    return await fn(await BridgeStore.open(sql));
  } finally {
    await sql.close();
  }
}

export async function operatorMain(argv: string[], io: OperatorIO = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  let code = 0;
  const program = new Command('svc-oauth')
    .description("The OpenID Connect bridge's operator commands (document 2). They act on the bridge's database.")
    .exitOverride()
    .configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(s) });
  const db = (cmd: Command) => cmd.option('--data-dir <dir>', "the bridge's --data-dir (SQLite)", './data/bridge').option('--database <url>', "the bridge's --database (postgres://...)");

  const keys = program.command('keys').description('signing keys');
  db(keys.command('rotate').description('make a new current signing key; the previous one stays in /jwks.json')).action(async (flags: DbFlags) => {
    const kid = await withStore(flags, (store) => new SigningKeys(store).rotate());
    io.stdout.write(`new signing key ${kid}\n`);
  });

  const clients = program.command('clients').description('applications');
  db(clients.command('suspend').argument('<client_id>').description('stop an application at once')).action(async (clientId: string, flags: DbFlags) => {
    await withStore(flags, async (store) => {
      await store.suspend(clientId);
      await store.audit('client.suspended', 'operator', { client_id: clientId });
    });
    io.stdout.write(`suspended ${clientId}\n`);
  });

  program
    .command('hash-secret')
    .argument('[secret]', 'the secret to hash (default: a new 256-bit one)')
    .description('a client secret and the client_secret_sha256 to put in the static clients file')
    .action((secret: string | undefined) => {
      const s = secret ?? newSecret();
      io.stdout.write(`${JSON.stringify({ client_secret: s, client_secret_sha256: hashSecret(s) })}\n`);
    });

  db(program.command('backup').argument('<file>').description('a consistent copy of the database (SQLite or PostgreSQL) as one SQLite file, taken while the bridge runs')).action(
    async (file: string, flags: DbFlags) => {
      if (flags.database !== undefined && /^postgres(ql)?:\/\//.test(flags.database)) {
        const pg = new PostgresSql(flags.database);
        try {
          const rows = await backupPostgres(pg, file);
          io.stdout.write(`backed up ${rows} rows of ${redact(flags.database)} to ${file} (one snapshot); keep it apart from the database\n`);
        } finally {
          await pg.close();
        }
        return;
      }
      const database = openDatabase(flags.dataDir, DB_FILE);
      try {
        await database.backup(file);
      } finally {
        database.close();
      }
      io.stdout.write(`backed up ${join(flags.dataDir, DB_FILE)} to ${file}; keep it apart from the data directory\n`);
    },
  );

  db(program.command('restore').argument('<file>').description('put a backup in place under --data-dir, or load it into --database postgres://... (stop the bridge first)')).action(
    async (file: string, flags: DbFlags) => {
      await stat(file);
      if (flags.database !== undefined && /^postgres(ql)?:\/\//.test(flags.database)) {
        const pg = new PostgresSql(flags.database);
        try {
          const rows = await restorePostgres(file, pg);
          io.stdout.write(`restored ${rows} rows from ${file} into ${redact(flags.database)}\n`);
        } finally {
          await pg.close();
        }
        return;
      }
      await mkdir(flags.dataDir, { recursive: true });
      const target = join(flags.dataDir, DB_FILE);
      await copyFile(file, target);
      for (const suffix of ['-wal', '-shm']) await copyFile('/dev/null', `${target}${suffix}`).catch(() => undefined);
      io.stdout.write(`restored ${file} to ${target}\n`);
    },
  );

  try {
    await program.parseAsync(argv, { from: 'user' });
    if (argv.length === 0) {
      program.outputHelp();
      code = 2;
    }
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    io.stderr.write(`svc-oauth: ${(error as Error).message}\n`);
    return 1;
  }
  return code;
}

const invoked = process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
if (invoked || process.env.SVC_OAUTH_ENTRY === '1') process.exitCode = await operatorMain(process.argv.slice(2));
