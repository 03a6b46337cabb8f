// Finding a signer (document 2): the waiting page a browser is shown once the ID is entered offers
// the identity's signer: `endpoints.web_signer` from its capabilities document, failing that
// `https://<id>/app/` when it resolved over HTTPS, each with the request handed over as
// `?auth=<request>` (document 1's handoff link), then the operator's default signer, the deep link
// carrying the request's short link, and for another device the short link itself with the match
// code. "The bridge never embeds or frames a signer": the page has no frame, embed or object.
import type { Check } from '../../../run/model.ts';
import { failOnServerError } from '../../../run/answers.ts';
import { bridgeCheck } from '../check.ts';
import { elementsNamed, links, parsedUrl, textOf } from '../pages.ts';
import { CheckFailure, said, type BridgeTarget } from '../driver.ts';

function signerLinksCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/native/signer-links',
    title:
      "the waiting page hands the request to the identity's signer first (the web_signer its capabilities document declares, failing that https://<id>/app/, with ?auth=<request>), offers the deep link with the request's short link, shows the short link and match code for another device, and frames nothing",
    rules: ['ob.native.find-signer', 'ob.native.never-frame'],
    context: ['ob.contract.transaction'],
    run: async (s, e) => {
      const { user, txUrl, view } = await s.waitingSignIn();
      if (typeof view.request_uri !== 'string') throw new CheckFailure(`the waiting view has no request_uri: ${JSON.stringify(view).slice(0, 200)}`);
      const page = await user.browser.http.get(txUrl, { headers: { accept: 'text/html' } });
      failOnServerError(page, 'the waiting page');
      if (!e.that(page.status === 200 && /^text\/html/i.test(page.headers['content-type'] ?? ''), `the waiting page answered ${said(page)}, not an HTML page`)) return;
      const html = page.text();
      const hrefs = links(html);
      // Handoff links: the request handed over whole, to a signer's /app/.
      const handoffs = hrefs.map(parsedUrl).filter((u): u is URL => u !== undefined && u.searchParams.has('auth'));
      e.that(handoffs.length > 0, `the waiting page offers no signer link carrying ?auth=<request>: links ${JSON.stringify(hrefs).slice(0, 400)}`);
      for (const u of handoffs) e.that(u.searchParams.get('auth') === view.request, `the signer link ${u.href.slice(0, 160)} does not hand over the issued request`);
      const own = `https://${user.key.identity}/app/`;
      const ownAt = handoffs.findIndex((u) => `${u.origin}${u.pathname}` === own);
      e.that(ownAt === 0, `the identity resolved over HTTPS with no web_signer, so ${own} comes first: the signer links are ${JSON.stringify(handoffs.map((u) => `${u.origin}${u.pathname}`))}`);
      // The deep link carries the short link, after the signers.
      const deep = hrefs.findIndex((h) => h.startsWith(`${t.profile.ids.deep_link}?`) && parsedUrl(h)?.searchParams.get('request_uri') === view.request_uri);
      e.that(deep >= 0, `no deep link ${t.profile.ids.deep_link}?request_uri=${view.request_uri}: links ${JSON.stringify(hrefs).slice(0, 400)}`);
      const firstHandoff = hrefs.findIndex((h) => parsedUrl(h)?.searchParams.has('auth') === true);
      if (deep >= 0 && firstHandoff >= 0) e.that(firstHandoff < deep, 'the deep link comes before the signer links');
      const text = textOf(html);
      e.that(text.includes(view.request_uri), `the page does not show the short link ${view.request_uri} for another device`);
      if (typeof view.match_code === 'string') e.that(text.includes(view.match_code), `the page does not show the match code ${view.match_code}`);
      const framed = elementsNamed(html, ['iframe', 'frame', 'embed', 'object']);
      e.that(framed.length === 0, `the waiting page embeds ${framed.join(', ')}: the bridge never frames a signer`);

      // Step 1: an identity whose capabilities document (document 3's file, on its own origin)
      // declares endpoints.web_signer is handed to that signer first, and step 2's /app/ is not
      // chosen ("Failing that").
      const declaring = await s.startSignIn();
      const web = `https://signer.${declaring.user.key.identity}/wallet/`;
      await t.authority.publish({ identity: declaring.user.key.identity, seed: declaring.user.key.seed, capabilities: { endpoints: { web_signer: web } } });
      const waiting = await s.post(declaring.user.browser, `${declaring.txUrl}/identify`, { id: declaring.user.key.identity });
      const declaredPage = await declaring.user.browser.http.get(declaring.txUrl, { headers: { accept: 'text/html' } });
      failOnServerError(declaredPage, 'the waiting page');
      const offered = links(declaredPage.text())
        .map(parsedUrl)
        .filter((u): u is URL => u !== undefined && u.searchParams.has('auth'))
        .map((u) => `${u.origin}${u.pathname}`);
      e.that(
        offered[0] === web && !offered.includes(`https://${declaring.user.key.identity}/app/`),
        `the identity's capabilities document declares web_signer ${web}, so it comes first and its /app/ is not chosen: the signer links are ${JSON.stringify(offered)} (the ID answered ${said(waiting.res)})`,
      );

      // Step 2 holds only "when the identity resolved over HTTPS": one published over DNS alone is not sent to its /app/.
      const dnsOnly = await s.startSignIn();
      await t.authority.publish({ identity: dnsOnly.user.key.identity, seed: dnsOnly.user.key.seed, https: false });
      const dnsWaiting = await s.post(dnsOnly.user.browser, `${dnsOnly.txUrl}/identify`, { id: dnsOnly.user.key.identity });
      if (typeof dnsWaiting.view.request === 'string') {
        const dnsPage = await dnsOnly.user.browser.http.get(dnsOnly.txUrl, { headers: { accept: 'text/html' } });
        failOnServerError(dnsPage, 'the waiting page');
        const own = `https://${dnsOnly.user.key.identity}/app/`;
        const dnsOffered = links(dnsPage.text())
          .map(parsedUrl)
          .filter((u): u is URL => u !== undefined && u.searchParams.has('auth'))
          .map((u) => `${u.origin}${u.pathname}`);
        e.that(!dnsOffered.includes(own), `the identity resolved over DNS alone, yet the waiting page hands the request to ${own}: the signer links are ${JSON.stringify(dnsOffered)}`);
      }
    },
  });
}

export const signerLinkChecks = (t: BridgeTarget): Check[] => [signerLinksCheck(t)];
