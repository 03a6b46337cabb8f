// What the RP publishes and hands out, judged by what a conforming signer needs to proceed (the
// harness signer, harness/actors/signer, does the signer's side): the metadata document, the
// request it builds, requests by reference, the context record, the login page's transports, and
// the encodings a receiver must accept.
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { Check } from '../../../run/model.ts';
import { Browser, Signer, SignerError, fetchMetadata, loadRequest, metadataProblems, validateRequest, checkAudience } from '../../../actors/signer/index.ts';
import { decodeObject, encodeObject } from '../../../../protocol/common/codec.ts';
import { inSchemaNames, makeAjv } from '../../../../protocol/common/schema.ts';
import { normalizeShortCode, referenceFromInput } from '../../../../protocol/signin/reference.ts';
import { normalizeOrigin, sameOrigin, splitUrl } from '../../../../protocol/common/url.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { vocabulary } from '../../../../schemas/ts/vocabulary.ts';
import { readFileSync } from 'node:fs';
import { rpCheck, type Expect } from '../check.ts';
import { CheckFailure, CheckSkip, StartRefused, accepted, errorCode, isObject, refused, safeJson, said, secretBits, sign, type RpTarget, type Session } from '../driver.ts';
import { failOnServerError, isCode } from '../../../run/answers.ts';

const schemaDir = new URL('../../../../schemas/json/objects/', import.meta.url);
let ajv: Ajv2020 | undefined;
function validator(name: string) {
  ajv ??= makeAjv();
  const schema = JSON.parse(readFileSync(new URL(`${name}.schema.json`, schemaDir), 'utf8')) as { $id?: string };
  return (schema.$id && ajv.getSchema(schema.$id)) || ajv.compile(schema);
}

function signerProblems(e: Expect, error: unknown, what: string): void {
  if (error instanceof SignerError) {
    for (const p of error.problems) e.fail(`${what}: ${p.detail} (${p.ruleId})`);
    return;
  }
  throw error;
}

const LOCATION_FIELDS = /^(lat|latitude|lon|lng|longitude|location|geo|coords|coordinates|city|region|postal|zip|address|ip)$/i;

function metadataDocumentCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/metadata/document',
    title: `the metadata at ${profile.ids.metadata_path} answers 200 without a redirect, under ${limits.metadata_body_max_bytes} bytes, with version, the fetched origin and a trusted name`,
    rules: ['ns.metadata.path', 'ns.metadata.version', 'ns.metadata.origin', 'ns.metadata.name', 'ns.metadata.no-redirects', 'ns.metadata.body-cap', 'ns.limits.metadata-body'],
    run: async (s, e) => {
      const raw = await s.metadata();
      e.that(raw.status === 200, `the metadata answered ${said(raw)}, expected 200 (signers do not follow redirects)`);
      e.that(raw.body.length <= limits.metadata_body_max_bytes, `the metadata is ${raw.body.length} bytes, over ${limits.metadata_body_max_bytes}`);
      try {
        const { metadata } = await fetchMetadata(profile, s.signer, target.origin, s.signal);
        e.that(typeof metadata.name === 'string' && metadata.name.trim() !== '', 'the metadata has no trusted name');
      } catch (error) {
        signerProblems(e, error, 'a conforming signer refuses the metadata');
      }
    },
  });
}

function profileMetadataSchemaCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/profile/metadata-schema',
    title: "the metadata matches the project's schema (spec/objects/rp-metadata.schema.json: which fields are required)",
    rules: ['ns.metadata.required'],
    run: async (s, e) => {
      const doc = safeJson(await s.metadata());
      const validate = validator('rp-metadata');
      if (!validate(inSchemaNames(profile, doc))) e.fail(`the metadata does not match spec/objects/rp-metadata.schema.json: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
    },
  });
}

function metadataUrisCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/metadata/uris',
    title: 'every URI the metadata publishes is on the RP origin, app_id (when present) is the reverse-DNS host, and advertised scopes are in the RP namespace',
    rules: ['ns.metadata.response-uris', 'ns.metadata.poll-uri', 'ns.metadata.context-uri', 'ns.metadata.logo-uri', 'ns.metadata.app-id', 'ns.metadata.scopes'],
    context: ['ns.request.scope-vocabulary'],
    run: async (s, e) => {
      const doc = safeJson(await s.metadata());
      for (const p of metadataProblems(profile, doc, target.origin)) e.fail(`${p.detail} (${p.ruleId})`);
      if (!isObject(doc)) return;
      for (const f of ['poll_uri', 'context_uri'] as const) e.that(doc[f] === undefined || typeof doc[f] === 'string', `${f} is not a string`);
    },
  });
}

function metadataOptionalFieldsCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/metadata/optional-fields',
    title: 'transports (when present) use the values seen, and contact_uri (when present) is a URI',
    rules: ['ns.metadata.transports', 'ns.metadata.contact-uri'],
    run: async (s, e) => {
      const doc = safeJson(await s.metadata());
      if (!isObject(doc)) return e.fail('the metadata is not JSON');
      if (doc.transports !== undefined) {
        e.that(
          Array.isArray(doc.transports) && doc.transports.every((t) => (vocabulary.transports.values as readonly string[]).includes(t as string)),
          `transports ${JSON.stringify(doc.transports)} are not among ${vocabulary.transports.values.join(', ')}`,
        );
      }
      if (doc.contact_uri !== undefined) e.that(typeof doc.contact_uri === 'string' && splitUrl(doc.contact_uri) !== undefined, `contact_uri ${JSON.stringify(doc.contact_uri)} is not a URI`);
      s.note(`transports ${JSON.stringify(doc.transports ?? null)}, contact ${JSON.stringify(doc.contact_uri ?? null)}`);
    },
  });
}

function requestShapeCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/request/shape',
    title:
      'the request the RP builds is what a conforming signer accepts: its own normalized origin as audience, version, ids, window, action, statement, canonical scopes, compact encoding, no RP signature',
    rules: [
      'ns.flow.audience-own-origin',
      'ns.request.version',
      'ns.request.request-id',
      'ns.request.domain',
      'ns.request.audience',
      'ns.request.nonce',
      'ns.request.timestamps',
      'ns.request.window',
      'ns.request.action',
      'ns.request.statement',
      'ns.request.scopes',
      'ns.request.unsigned',
      'ns.encoding.compact',
    ],
    context: ['ns.start.contract', 'ns.limits.window', 'ns.limits.statement', 'ns.limits.scopes'],
    run: async (s, e) => {
      const [a, b] = [await s.start(), await s.start()];
      const r = a.request;
      e.that(r.audience === target.origin, `audience ${JSON.stringify(r.audience)} is not the RP's normalized origin ${target.origin}`);
      e.that(normalizeOrigin(r.audience) === r.audience, 'the audience is not in normalized form');
      e.that(a.encoded === encodeObject(r), 'the encoded request is not the compact JSON in base64url without padding');
      e.that(r.signature === undefined, 'the request carries a signature field (the request is not signed by the RP)');
      if (r.domain !== undefined) e.that(typeof r.domain === 'string' && /^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/i.test(r.domain), `domain ${JSON.stringify(r.domain)} is not a host`);
      e.that(r.request_id !== b.request.request_id && r.nonce !== b.request.nonce, 'two transactions share a request_id or nonce');
      const validate = validator('request');
      if (!validate(inSchemaNames(profile, r))) e.fail(`the request does not match spec/objects/request.schema.json: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
      try {
        const { metadata } = await fetchMetadata(profile, s.signer, checkAudience(r.audience), s.signal);
        for (const p of validateRequest(profile, r, metadata)) e.fail(`a conforming signer refuses the request: ${p.detail} (${p.ruleId})`);
      } catch (error) {
        signerProblems(e, error, 'a conforming signer refuses the request');
      }
    },
  });
}

function requestNonceEntropyCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/request/nonce-entropy',
    title: `the request nonce carries at least ${limits.nonce_entropy_min_bytes} bytes of entropy (judged by its length and alphabet)`,
    rules: ['ns.request.nonce-entropy', 'ns.limits.nonce-entropy'],
    context: ['ns.start.contract'],
    run: async (s, e) => {
      const t = await s.start();
      const nonce = String(t.request.nonce);
      e.that(secretBits(nonce) >= limits.nonce_entropy_min_bytes * 8, `nonce ${JSON.stringify(nonce)} carries < ${limits.nonce_entropy_min_bytes * 8} bits`);
    },
  });
}

function requestAudienceTlsCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/request/audience-tls',
    title: 'the audience is https, or http only on a development host (loopback, localhost)',
    rules: ['ns.request.audience-http-dev', 'ns.auth.5'],
    context: ['ns.start.contract'],
    run: async (s, e) => {
      const t = await s.start();
      try {
        checkAudience(t.request.audience);
      } catch (error) {
        signerProblems(e, error, 'the audience');
      }
      s.note(String(t.request.audience));
    },
  });
}

function requestResponseUriCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/request/response-uri',
    title: 'response_uri is on the audience and among the published response_uris (or the RP publishes none and accepts any same-origin one)',
    rules: ['ns.request.response-uri', 'ns.metadata.unpublished-response-uris'],
    context: ['ns.start.contract', 'ns.auth.4', 'ns.metadata.response-uris'],
    run: async (s, e) => {
      const t = await s.start();
      const meta = (await s.published()).metadata;
      const uri = t.request.response_uri;
      if (uri === undefined) throw new CheckSkip('the request has no response_uri (paste only): nothing to judge');
      e.that(typeof uri === 'string' && sameOrigin(target.origin, uri), `response_uri ${JSON.stringify(uri)} is not on ${target.origin}`);
      const list = isObject(meta) && Array.isArray(meta.response_uris) ? (meta.response_uris as unknown[]) : undefined;
      if (list && list.length > 0) e.that(list.includes(uri), `response_uri ${String(uri)} is not among the published response_uris ${JSON.stringify(list)}`);
      else {
        const who = await s.identity();
        const done = await s.completeSameDevice(t, sign(profile, t.request, who));
        e.that(done.ok, `the RP publishes no response_uris, but a delivery to its same-origin response_uri failed: ${done.problem}`);
      }
      s.note(list ? 'hardened posture: response_uris published' : 'no response_uris published');
    },
  });
}

function profileStartBodyCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/profile/start-body',
    title: 'a start body of whitespace starts a login with the defaults; one that is not JSON, or not UTF-8, answers 400 missing_field',
    rules: ['ns.start.contract'],
    run: async (s, e) => {
      const post = (body: string | Uint8Array) => s.client(true).post(target.startUrl, body, { headers: { accept: 'application/json', 'content-type': 'application/json' } });
      const blank = await post(' \n ');
      e.that(blank.status === 201, `a start body of whitespace answered ${said(blank)}, expected 201`);
      for (const [what, body] of [
        ['not JSON', '{action: link}'],
        ['not UTF-8', Uint8Array.from([0x7b, 0xff, 0x7d])],
      ] as const) {
        const r = await post(body);
        e.that(r.status === 400 && isCode(errorCode(r), 'missing_field'), `a start body that is ${what} answered ${said(r)}, expected 400 missing_field`);
      }
    },
  });
}

function profileStartOptionsCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/profile/start-options',
    title: 'start options (action, scopes, statement) are honoured in the request, or refused with 400 start_option_unsupported',
    rules: ['ns.start.options'],
    context: ['ns.start.contract'],
    run: async (s, e) => {
      const wish = { action: 'link', scopes: [...vocabulary.scopes.values].reverse(), statement: `Link ${'x'.repeat(20)} é` };
      const res = await s.client(true).post(target.startUrl, wish, { headers: { accept: 'application/json' } });
      if (res.status === 400) {
        e.that(isCode(errorCode(res), 'start_option_unsupported'), `a 400 to start options must carry start_option_unsupported: ${said(res)}`);
        return s.note('the RP does not honour start options');
      }
      if (!e.that(res.status === 201, `start with options answered ${said(res)}`)) return;
      const b = safeJson(res);
      const d = isObject(b) && typeof b.request === 'string' ? decodeObject(b.request) : undefined;
      if (!d?.ok) return e.fail('the start result has no decodable request');
      e.that(d.value.action === wish.action, `action ${JSON.stringify(d.value.action)}, asked ${wish.action}`);
      e.that(JSON.stringify(d.value.scopes) === JSON.stringify([...wish.scopes].sort()), `scopes ${JSON.stringify(d.value.scopes)}, asked ${JSON.stringify(wish.scopes)} (normalized)`);
      e.that(d.value.statement === wish.statement, `statement ${JSON.stringify(d.value.statement)}, asked ${JSON.stringify(wish.statement)}`);
    },
  });
}

function requestStatementMaxCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/request/statement-max',
    title: `an approval with a statement of exactly ${limits.statement_max_bytes} bytes completes (when the RP builds such requests)`,
    rules: ['ns.limits.statement'],
    context: ['ns.start.contract', 'ns.start.options'],
    run: async (s, e) => {
      let t;
      try {
        t = await s.start({ statement: 'a'.repeat(limits.statement_max_bytes) });
      } catch (error) {
        if (error instanceof StartRefused) failOnServerError(error.response, 'the start contract');
        if (error instanceof CheckFailure) throw new CheckSkip(`the RP does not build a request with a ${limits.statement_max_bytes}-byte statement on request (ns.start.options)`);
        throw error;
      }
      if (t.request.statement !== 'a'.repeat(limits.statement_max_bytes)) throw new CheckSkip('the RP did not honour the statement start option');
      const done = await s.completeSameDevice(t, sign(profile, t.request, await s.identity()));
      e.that(done.ok, `an approval with a ${limits.statement_max_bytes}-byte statement did not complete: ${done.problem}`);
    },
  });
}

function referenceJsonCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/reference/json',
    title: 'the reference link answers {request} as JSON with Access-Control-Allow-Origin: *, no redirect, no match code, the same request',
    rules: ['ns.reference.json', 'ns.reference.no-redirects', 'ns.reference.no-match-code', 'ns.reference.same-origin', 'ns.transport.qr'],
    context: ['ns.start.contract'],
    run: async (s, e) => {
      const t = await s.start();
      if (!t.requestUri) return e.fail('the start result has no request_uri (the RP offers no request by reference)');
      const res = await s.signer.get(t.requestUri, { headers: { accept: 'application/json' } });
      e.that(res.status === 200, `the reference answered ${said(res)}, expected 200`);
      e.that(res.headers['access-control-allow-origin'] === '*', `Access-Control-Allow-Origin is ${JSON.stringify(res.headers['access-control-allow-origin'])}, expected *`);
      const b = safeJson(res);
      e.that(
        isObject(b) && typeof b.request === 'string' && JSON.stringify(decodeObject(b.request as string)) === JSON.stringify(decodeObject(t.encoded)),
        'the reference serves another request than the start result',
      );
      if (isObject(b)) e.that(!Object.keys(b).some((k) => /match/i.test(k)) && !Object.values(b).includes(t.matchCode), 'the reference answer carries the match code');
      try {
        await loadRequest(profile, s.signer, t.requestUri, s.signal);
      } catch (error) {
        signerProblems(e, error, 'a conforming signer refuses the reference');
      }
    },
  });
}

function referenceCodeCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/reference/code',
    title: `the reference code is ${limits.reference_code_length} characters of Crockford base32`,
    rules: ['ns.reference.code', 'ns.limits.reference-code'],
    context: ['ns.start.contract'],
    run: async (s, e) => {
      const t = await s.start();
      if (!t.requestUri) return e.fail('the start result has no request_uri');
      const code = decodeURIComponent(new URL(t.requestUri).pathname.split('/').filter(Boolean).at(-1) ?? '');
      e.that(
        code.length === limits.reference_code_length && normalizeShortCode(code) === code.toUpperCase(),
        `the reference code ${JSON.stringify(code)} is not ${limits.reference_code_length} Crockford base32 characters`,
      );
    },
  });
}

function referenceBrowserCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/reference/browser',
    title: 'the reference link opened in a browser answers a page offering signers, or redirects into one',
    rules: ['ns.reference.browser'],
    context: ['ns.start.contract'],
    run: async (s, e) => {
      const t = await s.start();
      if (!t.requestUri) return e.fail('the start result has no request_uri');
      const res = await s.client(true).get(t.requestUri, { headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' } });
      if (res.status >= 300 && res.status < 400)
        e.that(typeof res.location === 'string' && /[?&](auth|request_uri)=/.test(res.location), `the browser redirect ${res.location} does not hand the reference to a signer`);
      else {
        e.that(res.status === 200 && /text\/html/.test(res.headers['content-type'] ?? ''), `the browser answer is ${res.headers['content-type'] ?? 'no content type'}: ${said(res)}`);
        const html = res.text();
        e.that(html.includes(`${profile.ids.deep_link}?`) || /[?&]auth=/.test(html), 'the page offers no signer (no deep link or web-signer link)');
      }
    },
  });
}

function referenceGoneCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/reference/gone',
    title: 'a used reference link answers 404 or 410',
    rules: ['ns.reference.gone'],
    context: ['ns.start.contract', 'ns.reference.code'],
    cells: [{ rule: 'ns.reference.gone', facet: 'used', value: 'reference', operation: 'getRequestByReference' }],
    run: async (s, e) => {
      const t = await s.start();
      if (!t.requestUri) return e.fail('the start result has no request_uri');
      const d = await s.deliver(t.request, sign(profile, t.request, await s.identity()), { match: t.matchCode });
      e.that(accepted(d), `the approval answered ${said(d)}`);
      const used = await s.signer.get(t.requestUri, { headers: { accept: 'application/json' } });
      e.that(used.status === 404 || used.status === 410, `the used reference answered ${said(used)}, expected 404 or 410`);
    },
  });
}

function referenceCrossDeviceCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/reference/cross-device',
    title: 'a signer given only the reference link (and the match code from the screen) completes the starting page by polling',
    rules: ['ns.transport.qr', 'ns.transport.cross-device-poll'],
    context: ['ns.start.contract', 'ns.transport.poll-shape', 'ns.reference.match-required', 'ns.auth.1'],
    run: async (s, e) => {
      const t = await s.start();
      if (!t.requestUri) return e.fail('the start result has no request_uri');
      const who = await s.identity();
      const signer = new Signer({ profile, http: s.signer });
      let view: unknown;
      try {
        await signer.approve(t.requestUri, { key: who, match: t.matchCode, onConsent: (v) => void (view = v) });
      } catch (error) {
        return signerProblems(e, error, 'the harness signer could not approve by reference');
      }
      void view;
      const p = await s.pollStatus(t.pollSecret);
      e.that(p.status === 'completed' && p.identity === who.identity, `the poll answered ${said(p.response)}, expected completed ${who.identity}`);
    },
  });
}

function contextRecordCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/context/record',
    title: 'context_uri returns the context record of the request (no precise location) while it can be approved, and refuses after',
    rules: ['ns.transport.context', 'ns.context.fields', 'ns.context.no-location'],
    context: ['ns.start.contract', 'ns.metadata.context-uri'],
    cells: [{ rule: 'ns.transport.context', facet: 'completed', value: 'context-record', operation: 'getContext' }],
    run: async (s, e) => {
      const { t, url, res } = await contextOf(s);
      e.that(accepted(res), `context answered ${said(res)}`);
      const b = safeJson(res);
      if (!isObject(b)) return e.fail(`the context record is not a JSON object: ${said(res)}`);
      e.that(b.request_id === t.request.request_id, 'the context names another request_id');
      // The document lists the record's fields; whichever it carries are labels (strings).
      const labels = ['started_at', 'browser', 'client', 'client_host'].filter((f) => b[f] !== undefined && typeof b[f] !== 'string');
      e.that(labels.length === 0, `context fields that are not strings: ${labels.join(', ')}`);
      const bad = Object.keys(b).filter((k) => LOCATION_FIELDS.test(k));
      e.that(bad.length === 0, `the context record carries location fields: ${bad.join(', ')}`);
      await s.completeCrossDevice(t, sign(profile, t.request, await s.identity()));
      const after = await s.signer.get(url, { headers: { accept: 'application/json' } });
      e.that(refused(after), `context after completion answered ${said(after)}, expected a refusal`);
    },
  });
}

function profileContextRecordCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/profile/context-record',
    title: 'the context record has all five fields (spec/objects/context-record.schema.json), and the endpoint answers 404 after completion',
    rules: ['ns.context.all-fields'],
    context: ['ns.transport.context', 'ns.start.contract'],
    run: async (s, e) => {
      const { t, url, res } = await contextOf(s);
      const validate = validator('context-record');
      if (!validate(safeJson(res))) e.fail(`the context record does not match spec/objects/context-record.schema.json: ${JSON.stringify(validate.errors?.slice(0, 3))} (${said(res)})`);
      await s.completeCrossDevice(t, sign(profile, t.request, await s.identity()));
      const after = await s.signer.get(url, { headers: { accept: 'application/json' } });
      e.that(after.status === 404, `context after completion answered ${said(after)}, expected 404`);
    },
  });
}

function pageTransportsCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/page/transports',
    title: 'the login page offers the deep link and the web-signer handoff and sets the binding cookie (a QR code and a paste box noted)',
    rules: ['ns.transport.deeplink', 'ns.transport.web-handoff', 'ns.transaction.create'],
    context: ['ns.transport.qr', 'ns.transport.paste'],
    run: async (s, e) => {
      const page = target.loginPage;
      const res = await s.client(true).get(page.url, { headers: { accept: 'text/html' } });
      const isPage = res.status === 200 && /text\/html/.test(res.headers['content-type'] ?? '');
      failOnServerError(res, `the login page ${page.url}`);
      if (!isPage && !page.explicit) throw new CheckSkip(`no login page given (--rp-login-page URL), and the start URL ${page.url} serves none (${said(res)})`);
      if (!e.that(isPage, `the login page ${page.url} answered ${said(res)}, expected an HTML page`)) return;
      // The page builds a request, so it sets the binding cookie (the transaction table's first row).
      e.that(res.setCookies.length > 0, 'the login page sets no cookie: building a request sets the binding cookie on the starting browser');
      const html = res.text().replaceAll('&amp;', '&').replaceAll('&#x2F;', '/').replaceAll('&#39;', "'").replaceAll('&quot;', '"');
      const deep = new RegExp(`${profile.ids.deep_link.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\?request=([^"'<\\s&]+)`).exec(html);
      if (e.that(deep !== null, `the page offers no deep link ${profile.ids.deep_link}?request=`)) {
        const d = decodeObject(decodeURIComponent(deep![1]!));
        e.that(d.ok && d.value.audience === target.origin, 'the deep link does not carry a request for this RP');
      }
      const handoff = /href="([^"]*\/app\/\?auth=[^"]+)"/.exec(html);
      if (e.that(handoff !== null, 'the page offers no web-signer handoff {signer_url}/app/?auth=')) {
        const auth = new URL(handoff![1]!).searchParams.get('auth') ?? '';
        e.that(decodeObject(auth).ok || referenceFromInput(profile, auth) !== undefined, 'the handoff auth parameter is neither an encoded request nor a reference');
      }
      // A QR code and a paste box are offered forms (MAY, or any rendering): noted, not judged.
      if (!/<svg[\s>]|<canvas[\s>]|<img[\s>]/.test(html)) s.note('the page shows no QR code image');
      if (!/<(form|textarea)[^>]*(paste|response)/i.test(html)) s.note('the page offers no paste box');
    },
  });
}

function deliveryEncodingsCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/delivery/encodings',
    title: 'the receiver accepts the approval as raw JSON, padded base64url and the delivery object (one transaction each)',
    rules: ['ns.encoding.decode', 'ns.delivery.body', 'ns.transport.delivery'],
    context: ['ns.start.contract', 'ns.delivery.content-type'],
    // raw JSON and padded base64url are bare bodies; the object carries unpadded base64url.
    cells: [
      { rule: 'ns.delivery.body', facet: 'normalization', value: 'bare-approval', operation: 'postDelivery' },
      { rule: 'ns.delivery.body', facet: 'normalization', value: 'delivery-object', operation: 'postDelivery' },
      { rule: 'ns.encoding.decode', facet: 'normalization', value: 'raw-json', operation: 'postDelivery' },
      { rule: 'ns.encoding.decode', facet: 'normalization', value: 'padded-base64url', operation: 'postDelivery' },
      { rule: 'ns.encoding.decode', facet: 'normalization', value: 'base64url', operation: 'postDelivery' },
    ],
    run: async (s, e) => {
      for (const form of ['raw-json', 'padded', 'object'] as const) {
        const t = await s.start();
        const who = await s.identity();
        const done = await s.completeSameDevice(t, sign(profile, t.request, who), { form });
        e.that(done.ok, `the ${form} delivery did not complete: ${done.problem}`);
      }
    },
  });
}

function deliveryMatchUnsignedCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/delivery/match-unsigned',
    title: 'the match code is outside the signed bytes: one signed approval works same-device or, in another transaction, cross-device unchanged',
    rules: ['ns.delivery.match-unsigned', 'ns.version.resume-additive'],
    context: ['ns.start.contract'],
    run: async (s, e) => {
      const t = await s.start();
      const who = await s.identity();
      const approval = sign(profile, t.request, who);
      const done = await s.completeCrossDevice(t, approval);
      e.that(done.ok, `the signed approval with an added match code did not complete: ${done.problem}`);
      const t2 = await s.start();
      const same = await s.completeSameDevice(t2, sign(profile, t2.request, who));
      e.that(same.ok, `the same kind of approval without match did not complete: ${same.problem}`);
    },
  });
}

function signerSameDeviceCheck(target: RpTarget): Check {
  const profile = target.profile;
  return rpCheck(target, {
    id: 'rp/signer/same-device',
    title: 'the harness signer (metadata first, request validation, receipt and resume checks) signs in the starting browser',
    rules: ['ns.auth.6.resume-same-origin', 'ns.transport.same-device-return'],
    context: ['ns.start.contract', 'ns.auth.1', 'ns.auth.4'],
    run: async (s, e) => {
      const t = await s.start();
      const who = await s.identity();
      const signer = new Signer({ profile, http: s.signer });
      const browser = new Browser({ http: t.browser, profile });
      try {
        const r = await signer.approve(t.encoded, { key: who, sameDevice: true, browser });
        e.that(r.resumed !== undefined && r.resumed.status < 400, `resume answered ${r.resumed?.status ?? 'nothing'}`);
      } catch (error) {
        return signerProblems(e, error, 'the harness signer could not approve');
      }
      e.that(await s.completed(t), 'the login did not complete');
    },
  });
}

export function surfaceChecks(target: RpTarget): Check[] {
  return [
    metadataDocumentCheck(target),
    profileMetadataSchemaCheck(target),
    metadataUrisCheck(target),
    metadataOptionalFieldsCheck(target),
    requestShapeCheck(target),
    requestNonceEntropyCheck(target),
    requestAudienceTlsCheck(target),
    requestResponseUriCheck(target),
    profileStartOptionsCheck(target),
    profileStartBodyCheck(target),
    requestStatementMaxCheck(target),
    referenceJsonCheck(target),
    referenceCodeCheck(target),
    referenceBrowserCheck(target),
    referenceGoneCheck(target),
    referenceCrossDeviceCheck(target),
    contextRecordCheck(target),
    profileContextRecordCheck(target),
    pageTransportsCheck(target),
    deliveryEncodingsCheck(target),
    deliveryMatchUnsignedCheck(target),
    signerSameDeviceCheck(target),
  ];
}

/** A fresh transaction and its context record at the published context_uri (skips when none is published). */
/** A fresh transaction's context record, fetched once: its URL and answer (skips when no context_uri is published). */
export async function contextOf(s: Session) {
  const ctxUri = (await s.published()).contextUri;
  if (!ctxUri) throw new CheckSkip('the metadata publishes no context_uri (optional in document 1)');
  const t = await s.start();
  const url = `${ctxUri}${ctxUri.includes('?') ? '&' : '?'}request_id=${encodeURIComponent(String(t.request.request_id))}`;
  const res = await s.signer.get(url, { headers: { accept: 'application/json' } });
  return { t, url, res };
}

export type { Session };
