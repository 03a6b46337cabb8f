// Shared by the reference RP tests: a real HTTP client with a tiny per-browser cookie jar, a test
// identity with a StaticResolver, and the start contract.
import { fetch, type RequestInit } from 'undici';
import { StaticResolver } from '../../protocol/signin/resolver.ts';
import { publicKeyFromSeed } from '../../protocol/common/ed25519.ts';
import { signApproval } from '../../protocol/signin/signer.ts';
import { decodeObject, encodeObject } from '../../protocol/common/codec.ts';
import { defaultProfile, type Profile } from '../../protocol/common/profile.ts';

export const identity = 'alice.example.com';
export const seed = new Uint8Array(32).fill(7);
export const staticResolver = () => new StaticResolver().set(identity, publicKeyFromSeed(seed));

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
  json: any;
}

/** One "browser": keeps the cookies the RP sets (name=value only; enough for these tests). */
export class Browser {
  readonly cookies = new Map<string, string>();

  async send(url: string, init: Omit<RequestInit, 'headers'> & { headers?: Record<string, string> } = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    if (this.cookies.size > 0 && headers.cookie === undefined) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/Max-Age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers as unknown as Headers, text, json };
  }
}

export interface StartResult {
  request: string;
  request_uri: string;
  poll_secret: string;
  match_code: string;
}

export async function start(browser: Browser, base: string, options?: Record<string, unknown>): Promise<{ result: StartResult; request: Record<string, unknown> }> {
  const reply = await browser.send(`${base}/login`, {
    method: 'POST',
    headers: { accept: 'application/json', ...(options ? { 'content-type': 'application/json' } : {}) },
    ...(options ? { body: JSON.stringify(options) } : {}),
  });
  if (reply.status !== 201) throw new Error(`start failed: ${reply.status} ${reply.text}`);
  const decoded = decodeObject(reply.json.request);
  if (!decoded.ok) throw new Error('start returned an undecodable request');
  return { result: reply.json as StartResult, request: decoded.value };
}

export function approve(request: Record<string, unknown>, profile: Profile = defaultProfile, who: { identity: string; seed: Uint8Array } = { identity, seed }): string {
  return encodeObject(signApproval(profile, request, who));
}

export async function deliver(base: string, path: string, body: string, match?: string): Promise<Reply> {
  const browserless = new Browser();
  if (match === undefined) return browserless.send(base + path, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
  return browserless.send(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ response: body, match }) });
}

export async function poll(browser: Browser, base: string, secret: string, path = '/svc/poll'): Promise<Reply> {
  return browser.send(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ poll_secret: secret }) });
}

/** A wrong two-digit code for `code`. */
export const otherCode = (code: string) => String((Number(code) + 1) % 100).padStart(2, '0');
