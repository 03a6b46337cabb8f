// A Server-Sent Events reader over a streamed fetch (document 3 reads the stream with fetch, not a
// header-less EventSource): it opens the stream with the authentication headers, hands back the
// status at once, and then each event (`event:` and JSON `data:`) and each comment frame as it
// arrives, until closed.
import { Agent, request } from 'undici';

export interface SseEvent {
  event: string;
  data: unknown;
  raw: string;
}

export interface SseStream {
  status: number;
  headers: Record<string, string>;
  /** The body of a non-200 answer (the stream is not read then). */
  body?: string;
  /** Events received so far, in order. */
  events: SseEvent[];
  comments: string[];
  /** Resolves with the first event (after `afterIndex`) matching `pred`, or rejects after `timeoutMs`. */
  next(pred: (e: SseEvent) => boolean, timeoutMs: number, afterIndex?: number): Promise<SseEvent>;
  /** Resolves true once `cond` holds after a frame arrives (comments included), false when the stream ends or `timeoutMs` passes first. */
  until(cond: () => boolean, timeoutMs: number): Promise<boolean>;
  /** True once the server ended the stream. */
  readonly ended: boolean;
  close(): Promise<void>;
}

export async function openEvents(url: string, headers: Record<string, string>, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<SseStream> {
  const agent = new Agent({ headersTimeout: options.timeoutMs ?? 10_000, bodyTimeout: 0 });
  const abort = new AbortController();
  options.signal?.addEventListener('abort', () => abort.abort(), { once: true });
  const res = await request(url, { method: 'GET', headers: { accept: 'text/event-stream', ...headers }, dispatcher: agent, signal: abort.signal });
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) flat[k] = Array.isArray(v) ? v.join(', ') : String(v ?? '');
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  let ended = false;
  const close = async () => {
    abort.abort();
    await agent.close().catch(() => undefined);
  };
  if (res.statusCode !== 200) {
    const body = await res.body.text().catch(() => '');
    await close();
    return { status: res.statusCode, headers: flat, body, events, comments, next: () => Promise.reject(new Error('no stream')), until: async () => false, ended: true, close };
  }
  let buffer = '';
  const decoder = new TextDecoder();
  res.body.on('data', (chunk: Buffer | string) => {
    buffer += (typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })).replace(/\r\n?/g, '\n');
    let i;
    while ((i = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith(':')) comments.push(line.slice(1).trim());
        // An empty event name dispatches as `message` (HTML, server-sent events).
        else if (line.startsWith('event:')) event = line.slice(6).trim() || 'message';
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length > 0) {
        const text = data.join('\n');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // kept as text
        }
        events.push({ event, data: parsed, raw: frame });
      }
    }
    for (const w of waiters) w();
  });
  const finish = () => {
    ended = true;
    for (const w of waiters) w();
  };
  res.body.on('end', finish);
  res.body.on('error', finish);
  return {
    status: 200,
    headers: flat,
    events,
    comments,
    get ended() {
      return ended;
    },
    next(pred, timeoutMs, afterIndex = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = events.slice(afterIndex).find(pred);
          if (hit) {
            done();
            resolve(hit);
          } else if (ended) {
            done();
            reject(new Error(`the stream ended without the awaited event (received: ${events.map((e) => e.event).join(', ') || 'none'})`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no awaited event within ${timeoutMs} ms (received: ${events.map((e) => e.event).join(', ') || 'none'})`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    until(cond, timeoutMs) {
      return new Promise((resolve) => {
        const check = () => {
          if (cond() || ended) settle(cond());
        };
        const timer = setTimeout(() => settle(cond()), timeoutMs);
        const settle = (value: boolean) => {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(value);
        };
        waiters.add(check);
        check();
      });
    },
    close,
  };
}
