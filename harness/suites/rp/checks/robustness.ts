// Malformed input. The document asks only that a malformed delivery is refused and changes
// nothing (ns.delivery.body); the project asks more (profile): never a 5xx other than 503, every
// rejection in the envelope with status 400, 413 over the body cap, 429 when rate limited. Every
// endpoint is probed at the URL the RP publishes (or hands out), never at the project's paths.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { rpCheck } from '../check.ts';
import { envelopeOf, errorCode, refused, said, type RpTarget, type Session } from '../driver.ts';
import { isCode } from '../../../run/answers.ts';

interface Probe {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  body?: string | Uint8Array;
  contentType?: string;
  accept?: string;
}

function send(s: Session, p: Probe): Promise<HttpResponse> {
  const headers: Record<string, string> = { accept: p.accept ?? 'application/json' };
  if (p.contentType) headers['content-type'] = p.contentType;
  return s.signer.request(p.url, { method: p.method, headers, ...(p.body !== undefined ? { body: p.body } : {}) });
}

/** The URL with its last path segment replaced (a reference link with a junk code). */
function lastSegment(url: string, segment: string): string {
  const u = new URL(url);
  u.search = '';
  const parts = u.pathname.split('/');
  parts[parts.length - 1] = segment;
  return `${u.origin}${parts.join('/')}`;
}

/** Every endpoint with malformed input, at the URLs this RP publishes or hands out. */
async function endpointProbes(s: Session, target: RpTarget): Promise<Array<[string, Probe]>> {
  const junk = encodeURIComponent('\u0000<script>"\'%');
  const long = 'x'.repeat(8000);
  const published = await s.published();
  const poll = published.pollUri;
  const { started, resumeUri } = await s.approveSameDevice();
  const response = await s.responseUri(started.request);
  const probes: Array<[string, Probe]> = [
    ['start: broken JSON', { method: 'POST', url: target.startUrl, body: '{', contentType: 'application/json' }],
    ['start: array', { method: 'POST', url: target.startUrl, body: '[]', contentType: 'application/json' }],
    ['start: bad options', { method: 'POST', url: target.startUrl, body: '{"action":7,"scopes":"x","statement":{}}', contentType: 'application/json' }],
    ['start: unknown option', { method: 'POST', url: target.startUrl, body: '{"admin":true}', contentType: 'application/json' }],
    ['poll: empty', { method: 'POST', url: poll, body: '', contentType: 'application/json' }],
    ['poll: not JSON', { method: 'POST', url: poll, body: 'poll_secret=x', contentType: 'application/x-www-form-urlencoded' }],
    ['poll: wrong type', { method: 'POST', url: poll, body: '{"poll_secret":["a"]}', contentType: 'application/json' }],
    ['poll: long secret', { method: 'POST', url: poll, body: JSON.stringify({ poll_secret: long }), contentType: 'application/json' }],
    ['poll: GET', { method: 'GET', url: poll }],
    ['metadata: POST', { method: 'POST', url: `${target.origin}${target.profile.ids.metadata_path}`, body: '{}', contentType: 'application/json' }],
    ['delivery: GET', { method: 'GET', url: response }],
    ['delivery: PUT', { method: 'PUT', url: response, body: 'x', contentType: 'text/plain' }],
    ['unknown path', { method: 'GET', url: `${target.origin}/${randomBytes(6).toString('hex')}` }],
  ];
  if (resumeUri !== undefined) {
    const resume = resumeUri.split('?')[0]!;
    probes.push(
      ['resume: no code', { method: 'GET', url: resume }],
      ['resume: junk code', { method: 'GET', url: `${resume}?code=${junk}` }],
      ['resume: repeated code', { method: 'GET', url: `${resume}?code=a&code=b` }],
      ['resume: long code', { method: 'GET', url: `${resume}?code=${long}` }],
    );
  }
  if (published.contextUri !== undefined) {
    const join = published.contextUri.includes('?') ? '&' : '?';
    probes.push(['context: no id', { method: 'GET', url: published.contextUri }], ['context: junk id', { method: 'GET', url: `${published.contextUri}${join}request_id=${junk}` }]);
  }
  if (started.requestUri !== undefined) {
    probes.push(
      ['reference: junk code', { method: 'GET', url: lastSegment(started.requestUri, junk) }],
      ['reference: long code', { method: 'GET', url: lastSegment(started.requestUri, long) }],
      ['reference: browser junk', { method: 'GET', url: lastSegment(started.requestUri, '%ZZ'), accept: 'text/html' }],
    );
  }
  return probes;
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
  const cap = target.declared.deliveryBodyMaxBytes;
  return [
    c({
      id: 'rp/robust/delivery-malformed',
      title: 'malformed delivery bodies are refused (4xx) and complete nothing',
      rules: ['ns.delivery.body'],
      context: ['ns.start.contract', 'ns.transport.poll-shape'],
      // An object whose `response` is not a string, among the other junk.
      cells: [{ rule: 'ns.delivery.body', facet: 'normalization', value: 'near-miss', operation: 'postDelivery' }],
      run: async (s, e) => {
        const t = await s.start();
        const url = await s.responseUri(t.request);
        for (const [label, body, contentType] of JUNK_BODIES) {
          const r = await send(s, { method: 'POST', url, body, contentType });
          e.that(refused(r), `${label}: answered ${said(r)}, expected a refusal (4xx)`);
        }
        e.that((await s.pollStatus(t.pollSecret)).status !== 'completed', 'malformed deliveries completed the login');
      },
    }),
    c({
      id: 'rp/profile/delivery-malformed',
      title: 'malformed delivery bodies answer 400 with the error envelope',
      rules: ['ns.delivery.reject-status', 'ns.errors.envelope'],
      context: ['ns.delivery.body', 'ns.start.contract'],
      run: async (s, e) => {
        const t = await s.start();
        const url = await s.responseUri(t.request);
        for (const [label, body, contentType] of JUNK_BODIES) {
          const r = await send(s, { method: 'POST', url, body, contentType });
          e.that(r.status === 400, `${label}: answered ${said(r)}, expected 400`);
          const env = envelopeOf(r);
          if (typeof env === 'string') e.fail(`${label}: ${env}`);
        }
      },
    }),
    c({
      id: 'rp/profile/method-not-allowed',
      title: 'a method the response endpoint does not serve answers 405 with Allow and method_not_allowed',
      rules: ['ns.errors.method-not-allowed'],
      context: ['ns.start.contract', 'ns.errors.envelope'],
      run: async (s, e) => {
        const t = await s.start();
        const r = await send(s, { method: 'DELETE', url: await s.responseUri(t.request) });
        e.that(r.status === 405, `DELETE answered ${said(r)}, expected 405`);
        e.that(/\bPOST\b/.test(r.headers.allow ?? ''), `Allow is ${JSON.stringify(r.headers.allow)}, expected it to list POST`);
        e.that(isCode(errorCode(r), 'method_not_allowed'), `the code is ${JSON.stringify(errorCode(r))}, expected method_not_allowed`);
      },
    }),
    c({
      id: 'rp/profile/delivery-body-cap',
      title: `a delivery body far over the cap (${cap * 16} bytes) is refused with 413 body_too_large before it is parsed`,
      rules: ['ns.delivery.body-cap'],
      context: ['ns.start.contract'],
      run: async (s, e) => {
        const t = await s.start();
        let r: HttpResponse;
        try {
          r = await s.signer.post(await s.responseUri(t.request), 'A'.repeat(cap * 16), { headers: { 'content-type': 'text/plain', accept: 'application/json' } });
        } catch (error) {
          return e.fail(`the over-large delivery was not answered: ${(error as Error).message}`);
        }
        e.that(r.status === 413 && isCode(errorCode(r), 'body_too_large'), `answered ${said(r)}, expected 413 body_too_large`);
      },
    }),
    c({
      id: 'rp/profile/never-500',
      title: 'malformed input to every endpoint (start, poll, resume, context, reference link, metadata, delivery) never yields a 5xx, and JSON rejections carry the envelope',
      rules: ['ns.delivery.never-500', 'ns.errors.envelope'],
      context: ['ns.start.contract', 'ns.transport.poll-shape'],
      run: async (s, e) => {
        const probes: Array<[string, Probe]> = [...(await endpointProbes(s, target))];
        const t = await s.start();
        const url = await s.responseUri(t.request);
        for (const [label, body, contentType] of JUNK_BODIES) probes.push([`delivery: ${label}`, { method: 'POST', url, body, contentType }]);
        for (const [label, p] of probes) {
          const r = await send(s, p);
          e.that(r.status < 500 || r.status === 503, `${label}: ${p.method} ${p.url.slice(0, 120)} answered ${said(r)}`);
          if (r.status >= 400 && r.status !== 404 && r.status !== 405 && (p.accept ?? 'application/json') === 'application/json' && /json/.test(r.headers['content-type'] ?? '')) {
            const env = envelopeOf(r);
            if (typeof env === 'string') e.fail(`${label}: ${env}`);
          }
        }
      },
    }),
    c({
      id: 'rp/profile/rate-limits',
      title: 'a burst of polls is served, or limited with 429 and rate_limit_exceeded',
      rules: ['ns.limits.rate-limits'],
      context: ['ns.transport.poll-shape'],
      run: async (s, e) => {
        const client = s.client(false);
        const url = await s.pollUrl();
        const answers = await Promise.all(Array.from({ length: 30 }, () => client.post(url, { poll_secret: randomBytes(16).toString('base64url') }, { headers: { accept: 'application/json' } })));
        let limited = 0;
        for (const r of answers) {
          e.that(r.status < 500, `a poll in the burst answered ${said(r)}`);
          if (r.status === 429) {
            limited++;
            e.that(isCode(errorCode(r), 'rate_limit_exceeded'), `429 without rate_limit_exceeded: ${said(r)}`);
          }
        }
        s.note(limited > 0 ? `${limited} of 30 limited with 429` : 'no rate limit met in a burst of 30');
      },
    }),
  ];
}
