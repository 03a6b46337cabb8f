// Matrix cells of the drive (spec/facets/drive.yaml) judged many at once: each cell is one use of
// an operation by one principal, expected allowed (answered 2xx), refused (answered 4xx), or
// hidden (refused, or answered without naming anything the caller may not see). A cell the
// document leaves open is not judged. Uses run a few at a time against one shared tree.
import type { HttpResponse } from '../../../actors/http.ts';
import type { DriveActor, DriveClient } from '../../../actors/drive/client.ts';
import type { Cell } from '../../../run/model.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { said } from '../driver.ts';

/** What a use answered, as a failure message shows it. */
export interface Answer {
  status: number;
  text: string;
  shown: string;
}

export type Expectation = 'allowed' | 'refused' | 'hidden';

export const answerOf = (r: HttpResponse): Answer => ({ status: r.status, text: r.text(), shown: said(r) });

/** A drive event stream opened as `actor`: the status it answered (the stream closed at once). */
export async function streamAnswer(client: DriveClient, drive: string, actor: DriveActor): Promise<Answer> {
  const stream = await client.events(drive, actor);
  await stream.close();
  return { status: stream.status, text: stream.body ?? '', shown: `${stream.status} ${(stream.body ?? '(a stream)').slice(0, 200)}` };
}

/**
 * Whether `a` meets `expect`; a problem in words when not. `secrets` are what a hidden answer must
 * not name (node and share ids the caller may not see).
 */
export function judge(expect: Expectation, a: Answer, secrets: readonly string[] = []): string | undefined {
  if (a.status >= 500) return `answered ${a.shown}`;
  if (expect === 'allowed') return a.status >= 200 && a.status < 300 ? undefined : `is allowed and answered ${a.shown}`;
  if (a.status >= 400) return undefined;
  if (expect === 'hidden' && a.status >= 200 && a.status < 300 && !secrets.some((x) => a.text.includes(x))) return undefined;
  return `is not allowed and answered ${a.shown}`;
}

/** Runs `work` over `items`, `width` at a time. */
export async function pool<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

/** Cells claimed: one per value and operation of a facet of `rule`. */
export function cellsOf(rule: RuleId, facet: string, values: readonly string[], operations: readonly string[]): Array<Cell & { rule: RuleId }> {
  return values.flatMap((value) => operations.map((operation) => ({ rule, facet, value, operation })));
}
