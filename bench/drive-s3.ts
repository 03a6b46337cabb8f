// The drive's 1 MiB upload row with its chunks on Ceph (issue 17): a relay started with
// --drive-s3 on a one-node Ceph (test/setup/ceph.sh: monitor, memstore OSD, radosgw), the same
// upload as ./drive.ts's (missing list, 8 PUTs at a time, one commit per file) except that the
// missing list names MD5s, so the PUTs go to radosgw through presigned URLs and each commit has
// the relay read its chunks back and check their SHA-256. Its ratio is against ./drive.ts's disk
// floor of the same run; its own floor is the same bytes PUT straight to radosgw through URLs the
// bench presigns itself (same headers, same load generator), no relay. The OSD keeps objects in
// memory (memstore): nothing is fsynced there, so the Ceph rows are not durable as the disk's are.
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Authority } from '../harness/actors/authority/index.ts';
import type { ReferenceChild } from '../harness/run/spawn.ts';
import { cpuWatch, describeCpu, verdict, type CpuReport } from './cpu.ts';
import { chunksPerFile, expectAll, FILES, mib, openDrive, prepareUpload, upload, UPLOAD_CONCURRENCY } from './drive-upload.ts';
import { isMissing, spawnBenchRelay, startCeph, type Ceph } from './engines.ts';
import { serialize } from './loadgen.ts';
import type { BenchRow } from './verifier.ts';

const note = (name: string): BenchRow => ({ name, opsPerSecond: Number.NaN, note: true });

export async function cephUploadRows(authority: Authority, diskRate: number): Promise<BenchRow[]> {
  const ceph = await startCeph();
  if (isMissing(ceph)) return [note(`relay drive upload on Ceph S3: SKIPPED, ${ceph.missing}`)];
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-drive-s3-'));
  let relay: ReferenceChild | undefined;
  try {
    relay = await spawnBenchRelay(authority, ['--data-dir', dir, '--drive-quota', String(2 ** 40), '--drive-s3', `${ceph.endpoint}/svc-drive`], {
      env: { DRIVE_S3_ACCESS_KEY: ceph.accessKey, DRIVE_S3_SECRET_KEY: ceph.secretKey },
    });
    const session = await openDrive(authority, relay, true);
    const files = prepareUpload(session, FILES, chunksPerFile(1024), 1024 * 1024 - 4, true);
    const chunks = files.flatMap((f) => f.chunks.map((c) => c.bytes));
    const bytes = chunks.reduce((s, c) => s + c.length, 0);
    const pids = { relay: relay.proc.pid, radosgw: ceph.pid, 'ceph-osd': ceph.osdPid, 'ceph-mon': ceph.monPid };
    const watch = cpuWatch(pids);
    const phases: { missing?: number; put?: number; commit?: number } = {};
    const rate = bytes / (await upload(relay.url, files, phases));
    const cpu = watch();
    const floor = await radosgwFloor(ceph, chunks, { radosgw: ceph.pid, 'ceph-osd': ceph.osdPid, 'ceph-mon': ceph.monPid });
    const floorRate = bytes / floor.seconds;
    return [
      {
        name: `radosgw floor, 1 MiB chunks: the same bytes PUT straight to radosgw (presigned, ${UPLOAD_CONCURRENCY} concurrent), MiB/s; ratio vs disk floor`,
        opsPerSecond: mib(floorRate),
        ratio: floorRate / diskRate,
      },
      note(`    CPU: ${describeCpu(floor.cpu)}`),
      note(`    ${verdict(floor.cpu, [])}`),
      {
        name: `relay drive upload MiB/s on Ceph S3, 1 MiB chunks: missing + presigned PUTs to radosgw + commit (read back); ratio vs disk floor`,
        opsPerSecond: mib(rate),
        ratio: rate / diskRate,
      },
      note(`    CPU: ${describeCpu(cpu)}`),
      note(`    ${verdict(cpu, ['relay'])}`),
      note(`    seconds: missing lists ${phases.missing!.toFixed(2)}, PUTs ${phases.put!.toFixed(2)}, commits (read back) ${phases.commit!.toFixed(2)}`),
      note(`    relay on Ceph / radosgw floor: ${(rate / floorRate).toFixed(3)}; ${ceph.version}`),
    ];
  } finally {
    await relay?.stop();
    await ceph.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The same chunks PUT to a bucket of their own through URLs presigned here, as the relay presigns them. */
async function radosgwFloor(ceph: Ceph, chunks: Uint8Array[], pids: Record<string, number | undefined>): Promise<{ seconds: number; cpu: CpuReport }> {
  const s3 = new S3Client({
    endpoint: ceph.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: ceph.accessKey, secretAccessKey: ceph.secretKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  try {
    await s3.send(new CreateBucketCommand({ Bucket: 'svc-bench-floor' }));
    const host = new URL(ceph.endpoint).host;
    const requests = await Promise.all(
      chunks.map(async (bytes) => {
        const md5 = createHash('md5').update(bytes).digest('base64');
        const key = createHash('sha256').update(bytes).digest('hex');
        const command = new PutObjectCommand({ Bucket: 'svc-bench-floor', Key: key, ContentMD5: md5, ContentLength: bytes.length, IfNoneMatch: '*' });
        const url = new URL(await getSignedUrl(s3, command, { expiresIn: 600, unhoistableHeaders: new Set(['if-none-match']) }));
        return serialize(host, { method: 'PUT', path: `${url.pathname}${url.search}`, headers: { 'content-md5': md5, 'if-none-match': '*' }, body: bytes });
      }),
    );
    const watch = cpuWatch(pids);
    const { seconds } = await expectAll(ceph.endpoint, requests, UPLOAD_CONCURRENCY, 200, 'PUTs straight to radosgw');
    return { seconds, cpu: watch() };
  } finally {
    s3.destroy();
  }
}
