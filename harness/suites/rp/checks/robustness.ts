// Nothing a client sends produces a 5xx (other than 503 for an unreachable nonce cache), and
// rejections carry the error envelope (ns.delivery.never-500, DESIGN principle 5). Every endpoint
// gets malformed input; the delivery endpoint gets malformed bodies and an over-large one.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { rpCheck, type Expect } from '../check.ts';
import { envelopeOf, isObject, safeJson, type RpTarget, type Session } from '../driver.ts';

interface Probe {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  body?: string | Uint8Array;
  contentType?: string;
  accept?: string;
}

async function probe(s: Session, e: Expect, p: Probe, label: string, expect?: (r: HttpResponse) => void): Promise<void> {
  const headers: Record<string, string> = { accept: p.accept ?? 'application/json' };
  if (p.contentType) headers['content-type'] = p.contentType;
  const r = await s.signer.request(p.url, { method: p.method, headers, ...(p.body !== undefined ? { body: p.body } : {}) });
  e.that(r.status < 500 || r.status === 503, `${label}: ${p.method} ${p.url} answered ${r.status}`);
  if (r.status >= 400 && r.status !== 404 && r.status !== 405 && (p.accept ?? 'application/json') === 'application/json' && /json/.test(r.headers['content-type'] ?? '')) {
    const env = envelopeOf(r);
    if (typeof env === 'string') e.fail(`${label}: ${env}`);
  }
  expect?.(r);
}

const JUNK_BODIES: Array<[string, string | Uint8Array, string]> = [
  ['empty', '', 'text/plain'],
  ['not base64', '!!!not-an-approval!!!', 'text/plain'],
  ['base64 of junk', Buffer.from('garbage garbage').toString('base64url'), 'text/plain'],
  ['JSON array', '[1,2,3]', 'application/json'],
  ['JSON string', '"x"', 'application/json'],
  ['JSON null', 'null', 'application/json'],
  ['broken JSON', '{"response":', 'application/json'],
  ['response not a string', '{"response":123,"match":"00"}', 'application/json'],
  ['match not two digits', '{"response":"eyJ4IjoxfQ","match":"1234567"}', 'application/json'],
  ['object with junk', '{"svc_auth":{"a":[]},"identity":[],"signature":null}', 'application/json'],
  ['invalid UTF-8', new Uint8Array([0xff, 0xfe, 0xfd, 0x00, 0x80]), 'text/plain'],
  ['deeply nested', `${'['.repeat(5000)}${']'.repeat(5000)}`, 'application/json'],
  ['wrong content type', 'eyJ4IjoxfQ', 'application/x-www-form-urlencoded'],
];

export function robustnessChecks(target: RpTarget): Check[] {
  const c = (spec: Parameters<typeof rpCheck>[1]) => rpCheck(target, spec);
  const o = target.origin;
  const ids = target.profile.ids;
  return [
    c({
      id: 'rp/robust/delivery-malformed',
      title: 'malformed delivery bodies are refused with 400 and the error envelope, never a 5xx',
      rules: ['ns.delivery.never-500', 'ns.delivery.body', 'ns.delivery.reject-status'],
      run: async (s, e) => {
        const t = await s.start();
        const url = s.responseUri(t.request);
        for (const [label, body, contentType] of JUNK_BODIES) {
          await probe(s, e, { method: 'POST', url, body, contentType }, label, (r) => e.that(r.status >= 400 && r.status < 500, `${label}: answered ${r.status}, expected a 4xx refusal`));
        }
        e.that((await s.pollStatus(t.pollSecret)).status === 'pending', 'malformed deliveries changed the transaction');
      },
    }),
    c({
      id: 'rp/robust/delivery-body-cap',
      title: `a delivery body of ${limits.rp_delivery_body_max_bytes * 16} bytes is refused with 413 before it is parsed`,
      rules: ['ns.delivery.body-cap', 'ns.delivery.never-500'],
      run: async (s, e) => {
        const t = await s.start();
        const big = 'A'.repeat(limits.rp_delivery_body_max_bytes * 16);
        let r: HttpResponse;
        try {
          r = await s.signer.post(s.responseUri(t.request), big, { headers: { 'content-type': 'text/plain', accept: 'application/json' } });
        } catch (error) {
          return e.fail(`the over-large delivery was not answered: ${(error as Error).message}`);
        }
        e.that(r.status === 413, `answered ${r.status}, expected 413`);
        const env = envelopeOf(r);
        if (typeof env === 'object') e.that(env.error === 'body_too_large', `error ${env.error}, expected body_too_large`);
      },
    }),
    c({
      id: 'rp/robust/endpoints-malformed',
      title: 'malformed input to the start, poll, resume, context, reference and metadata endpoints never yields a 5xx',
      rules: ['ns.delivery.never-500', 'ns.transport.poll-shape', 'ns.start.contract'],
      run: async (s, e) => {
        const junk = encodeURIComponent('\u0000<script>"\'%');
        const long = 'x'.repeat(8000);
        const probes: Array<[string, Probe]> = [
          ['start: broken JSON', { method: 'POST', url: target.startUrl, body: '{', contentType: 'application/json' }],
          ['start: array', { method: 'POST', url: target.startUrl, body: '[]', contentType: 'application/json' }],
          ['start: bad options', { method: 'POST', url: target.startUrl, body: '{"action":7,"scopes":"x","statement":{}}', contentType: 'application/json' }],
          ['start: unknown option', { method: 'POST', url: target.startUrl, body: '{"admin":true}', contentType: 'application/json' }],
          ['poll: empty', { method: 'POST', url: s.pollUrl(), body: '', contentType: 'application/json' }],
          ['poll: not JSON', { method: 'POST', url: s.pollUrl(), body: 'poll_secret=x', contentType: 'application/x-www-form-urlencoded' }],
          ['poll: wrong type', { method: 'POST', url: s.pollUrl(), body: '{"poll_secret":["a"]}', contentType: 'application/json' }],
          ['poll: long secret', { method: 'POST', url: s.pollUrl(), body: JSON.stringify({ poll_secret: long }), contentType: 'application/json' }],
          ['poll: GET', { method: 'GET', url: s.pollUrl() }],
          ['resume: no code', { method: 'GET', url: `${o}${ids.resume_path}` }],
          ['resume: junk code', { method: 'GET', url: `${o}${ids.resume_path}?code=${junk}` }],
          ['resume: repeated code', { method: 'GET', url: `${o}${ids.resume_path}?code=a&code=b` }],
          ['resume: long code', { method: 'GET', url: `${o}${ids.resume_path}?code=${long}` }],
          ['context: no id', { method: 'GET', url: `${o}${ids.context_path}` }],
          ['context: junk id', { method: 'GET', url: `${o}${ids.context_path}?request_id=${junk}` }],
          ['reference: junk code', { method: 'GET', url: `${o}/r/${junk}` }],
          ['reference: long code', { method: 'GET', url: `${o}/r/${long}` }],
          ['reference: browser junk', { method: 'GET', url: `${o}/r/%ZZ`, accept: 'text/html' }],
          ['metadata: POST', { method: 'POST', url: `${o}${ids.metadata_path}`, body: '{}', contentType: 'application/json' }],
          ['delivery: GET', { method: 'GET', url: `${o}${ids.rp_response_path}` }],
          ['delivery: PUT', { method: 'PUT', url: `${o}${ids.rp_response_path}`, body: 'x', contentType: 'text/plain' }],
          ['unknown path', { method: 'GET', url: `${o}/${randomBytes(6).toString('hex')}` }],
        ];
        for (const [label, p] of probes) await probe(s, e, p, label);
      },
    }),
    c({
      id: 'rp/robust/rate-limits',
      title: 'a burst of starts and polls is served, or limited with 429 and rate_limit_exceeded',
      rules: ['ns.limits.rate-limits', 'ns.delivery.never-500'],
      run: async (s, e) => {
        const client = s.client(false);
        const answers = await Promise.all(Array.from({ length: 30 }, () => client.post(s.pollUrl(), { poll_secret: randomBytes(16).toString('base64url') }, { headers: { accept: 'application/json' } })));
        let limited = 0;
        for (const r of answers) {
          e.that(r.status < 500, `a poll in the burst answered ${r.status}`);
          if (r.status === 429) {
            limited++;
            const b = safeJson(r);
            e.that(isObject(b) && b.error === 'rate_limit_exceeded', '429 without rate_limit_exceeded');
          }
        }
        return limited > 0 ? `${limited} of 30 limited with 429` : 'no rate limit met in a burst of 30';
      },
    }),
  ];
}
