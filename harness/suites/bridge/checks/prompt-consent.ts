// prompt=consent (rule ob.authorize.prompt-consent, the project's: document 2 names only
// prompt=none and prompt=login; OpenID Connect Core section 3.1.2.1 says the server "SHOULD prompt
// the End-User for consent"). A user whose stored consent covers the claims signs in again without
// a consent step; with prompt=consent, alone or beside login, the consent step is shown again.
import type { Check } from '../../../run/model.ts';
import { bridgeCheck } from '../check.ts';
import type { BridgeTarget } from '../driver.ts';

function promptConsentCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/profile/prompt-consent',
    title: 'prompt=consent shows the consent step again though a stored consent covers the claims, alone (no new proof) and beside prompt=login (after a new proof)',
    rules: ['ob.authorize.prompt-consent'],
    context: ['ob.sso.reuse'],
    run: async (s, e) => {
      const scope = `openid ${t.profile.ids.id_scope}`;
      const first = await s.signIn({ scope });
      if (!e.that(first.response.code !== undefined && first.consent !== undefined, `the first sign-in gave no code after consent: ${first.response.location}`)) return;
      const again = await s.signIn({ user: first.user, scope, extra: { prompt: 'consent' } });
      e.that(
        again.consent !== undefined && !again.signed && again.response.code !== undefined,
        `prompt=consent with a covering consent: consent step ${again.consent !== undefined}, new proof ${again.signed}, ${again.response.location}`,
      );
      const both = await s.signIn({ user: first.user, scope, extra: { prompt: 'login consent' } });
      e.that(
        both.consent !== undefined && both.signed && both.response.code !== undefined,
        `prompt=login consent with a covering consent: consent step ${both.consent !== undefined}, new proof ${both.signed}, ${both.response.location}`,
      );
      // The stored consent still covers a request that does not ask again.
      const plain = await s.signIn({ user: first.user, scope });
      e.that(plain.consent === undefined && plain.response.code !== undefined, `without prompt the covered sign-in showed consent again: ${plain.response.location}`);
    },
  });
}

export const promptConsentChecks = (t: BridgeTarget): Check[] => [promptConsentCheck(t)];
