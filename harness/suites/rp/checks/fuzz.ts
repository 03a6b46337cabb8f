// The RP's front doors for the fuzz (harness/fuzz): each delivery carries an approval signed for a
// fresh transaction by a published identity (its fields are then mutated), a poll its transaction's
// poll secret, a context request its request_id, a resume its resume code from the browser that
// holds the binding cookie, a reference link a live code. The file's paths map to the URLs the RP
// publishes (metadata, request_uri, receipts). Kept while fuzzing: a cross-device approval whose
// starting page must still complete by polling afterwards (a resume code would expire sooner).
import { fuzzChecks, type FrontDoor } from '../../../fuzz/check.ts';
import type { Draft } from '../../../fuzz/mutations.ts';
import { loadOperations, specFile, type Operation } from '../../../fuzz/operations.ts';
import type { Check } from '../../../run/model.ts';
import type { HttpClient } from '../../../actors/http.ts';
import { Session, said, sign, type RpTarget } from '../driver.ts';

export function rpFuzzChecks(t: RpTarget): Check[] {
  return fuzzChecks(
    'rp',
    { ids: { document: 'rp/profile/fuzz', profile: 'rp/profile/fuzz-statuses' }, document: ['ns.delivery.never-500', 'ns.errors.envelope'], profile: ['ns.errors.openapi-statuses'] },
    () => rpDoor(t),
  );
}

const queryOf = (path: string) => (path.includes('?') ? path.slice(path.indexOf('?')) : '');

async function rpDoor(t: RpTarget): Promise<FrontDoor> {
  const s = new Session(t);
  const published = await s.published();
  const kept = await s.start();
  const keptDelivery = await s.deliver(kept.request, sign(t.profile, kept.request, await s.identity()), { match: kept.matchCode });
  const first = await s.start();
  const referenceBase = first.requestUri?.replace(/[^/]+$/, '');
  const resumeBase = (await s.approveSameDevice()).resumeUri?.split('?')[0];
  // The browser of the draft being sent: a resume goes out with its binding cookie.
  let browser: HttpClient = s.signer;
  const urls: Record<string, string | undefined> = {
    getRpMetadata: `${t.origin}${t.profile.ids.metadata_path}`,
    startLogin: t.loginPage.url,
    startTransactionForTest: t.startUrl,
    preflightDelivery: published.responseUris[0],
    postDelivery: published.responseUris[0],
    getContext: published.contextUri,
    pollTransaction: published.pollUri,
  };
  const drafts: Record<string, () => Promise<Draft>> = {
    postDelivery: async () => {
      const started = await s.start();
      browser = started.browser;
      return { params: {}, query: {}, body: sign(t.profile, started.request, await s.identity()) };
    },
    pollTransaction: async () => ({ params: {}, query: {}, body: { poll_secret: (await s.start()).pollSecret } }),
    getContext: async () => ({ params: {}, query: { request_id: String((await s.start()).request.request_id) } }),
    startTransactionForTest: async () => ({ params: {}, query: {}, body: {} }),
    getRequestByReference: async () => ({ params: { code: (await s.start()).requestUri?.split('/').at(-1) ?? 'AAAAAAAA' }, query: {} }),
    resumeLogin: async () => {
      const a = await s.approveSameDevice();
      browser = a.started.browser;
      return { params: {}, query: { code: a.resumeUri ? (new URL(a.resumeUri).searchParams.get('code') ?? '') : '' } };
    },
  };
  return {
    base: t.origin,
    operations: loadOperations(specFile('rp')),
    draft: async (op): Promise<Draft> => {
      browser = s.signer;
      return (await drafts[op.id]?.()) ?? (op.bodyTypes.length > 0 ? { params: {}, query: {}, body: {} } : { params: {}, query: {} });
    },
    open: async () => ({}),
    cap: (op) => (op.id === 'postDelivery' ? t.declared.deliveryBodyMaxBytes : undefined),
    url: (op: Operation, path: string) => {
      if (op.id === 'getRequestByReference' && referenceBase) return `${referenceBase}${path.slice(op.path.indexOf('{'))}`;
      if (op.id === 'resumeLogin' && resumeBase) return `${resumeBase}${queryOf(path)}`;
      const known = urls[op.id];
      return known ? `${known.split('?')[0]!}${queryOf(path)}` : `${t.origin}${path}`;
    },
    request: async (method, url, headers, body, signal) => {
      const r = await browser.request(url, { method, headers, ...(body !== undefined ? { body } : {}), signal });
      return { status: r.status, text: r.text() };
    },
    keep: async () => async () => {
      if (keptDelivery.status >= 300) return `the cross-device approval made before the fuzz was refused: ${said(keptDelivery)}`;
      const p = await s.pollStatus(kept.pollSecret, kept.browser);
      return p.status === 'completed' ? undefined : `the approval delivered before the fuzz no longer completes its page: ${said(p.response)}`;
    },
    alive: async () => {
      const r = await s.metadata();
      return r.status === 200 ? undefined : `after the fuzz the metadata answered ${said(r)}`;
    },
  };
}
