// login_hint on the sign-in page (rule ob.authorize.login-hint-prefill, the project's: document 2
// says only that login_hint may supply the ID). The page a request opens shows its hint, or
// IndieAuth's `me`, in the ID field, HTML-escaped: a hint is attacker-chosen text on the
// bridge's own origin. Without a hint the field is empty.
import { decodeHTMLAttribute } from 'entities';
import type { Check } from '../../../run/model.ts';
import { newPkce } from '../../../actors/oidc/client.ts';
import { bridgeCheck } from '../check.ts';
import { CheckFailure, said, type BridgeTarget } from '../driver.ts';

/** The value of the sign-in page's ID field (`<input name="id" value="...">`), its character references decoded. */
function idField(html: string): string | undefined {
  const input = /<input\b[^>]*\bname="id"[^>]*>/i.exec(html)?.[0];
  return input === undefined ? undefined : decodeHTMLAttribute(/\bvalue="([^"]*)"/i.exec(input)?.[1] ?? '');
}

function loginHintPrefillCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/profile/login-hint-prefill',
    title: "the sign-in page shows login_hint, or IndieAuth's me, in its ID field, HTML-escaped; without a hint the field is empty",
    rules: ['ob.authorize.login-hint-prefill'],
    context: ['ob.authorize.login-hint', 'ob.contract.transaction'],
    run: async (s, e) => {
      const user = await s.newUser();
      const page = async (extra: Record<string, string>): Promise<string | undefined> => {
        const res = await s.openAuthorize(user.browser, { ...s.params('basic', newPkce(), 'st-hint', 'n'), ...extra });
        if (res.location === undefined) throw new CheckFailure(`/authorize did not send the browser on: ${said(res)}`);
        const shown = await user.browser.http.get(new URL(res.location, t.issuer).href, { headers: { accept: 'text/html' } });
        return idField(shown.text());
      };
      const id = user.key.identity;
      const cases: [string, Record<string, string>, string][] = [
        ['login_hint', { login_hint: id }, id],
        ['me', { me: `https://${id}/` }, `https://${id}/`],
        // Unescaped, its quote would end the attribute and the markup would reach the page.
        ['a hint with markup', { login_hint: '"><b>x</b>&amp;' }, '"><b>x</b>&amp;'],
        ['no hint', {}, ''],
      ];
      for (const [what, extra, shown] of cases) {
        const field = await page(extra);
        e.that(field === shown, `with ${what} the ID field reads ${JSON.stringify(field)}, not ${JSON.stringify(shown)}`);
      }
    },
  });
}

export const loginHintChecks = (t: BridgeTarget): Check[] => [loginHintPrefillCheck(t)];
