// Report files are written whole or not at all, so CI never archives a truncated report.
import { rename, writeFile } from 'node:fs/promises';

export async function writeFileAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, text, 'utf8');
  await rename(tmp, file);
}
