// Verification rule 2: the audience is this RP's origin.
import type { Profile } from '../../../../../protocol/common/profile.ts';
import { type Scenario, signedWith, R, foreignOrigin } from './scenario.ts';

function rule2AudienceOtherOriginScenario(_profile: Profile): Scenario {
  return {
    name: '2/audience-other-origin',
    title: 'an approval for another origin (re-signed) is refused',
    rules: ['ns.verify.2'],
    context: ['ns.request.audience'],
    expect: R(400, 'audience_mismatch'),
    cells: [{ rule: 'ns.verify.2', facet: 'binding', value: 'audience' }],
    build: (m) => signedWith(m, { audience: foreignOrigin }),
  };
}

function rule2AudienceNotAnOriginScenario(_profile: Profile): Scenario {
  return {
    name: '2/audience-not-an-origin',
    title: 'an audience with a path (re-signed) is refused',
    rules: ['ns.verify.2'],
    context: ['ns.request.audience'],
    expect: R(400, 'invalid_audience', 'audience_mismatch'),
    cells: [{ rule: 'ns.verify.2', facet: 'normalization', value: 'near-miss' }],
    build: (m) => signedWith(m, { audience: `${m.request.audience as string}/login` }),
  };
}

function rule2AudienceOtherSchemeScenario(_profile: Profile): Scenario {
  return {
    name: '2/audience-other-scheme',
    title: 'the same host under the other scheme (re-signed) is refused',
    rules: ['ns.verify.2'],
    context: ['ns.request.audience-http-dev', 'ns.auth.5'],
    expect: R(400, 'audience_mismatch', 'insecure_audience'),
    cells: [{ rule: 'ns.verify.2', facet: 'normalization', value: 'near-miss' }],
    build: (m) =>
      signedWith(m, {
        audience: (m.request.audience as string).startsWith('https:') ? (m.request.audience as string).replace(/^https:/, 'http:') : (m.request.audience as string).replace(/^http:/, 'https:'),
      }),
  };
}

/** In the order the checks run. */
export function rule2Scenarios(profile: Profile): Scenario[] {
  return [rule2AudienceOtherOriginScenario(profile), rule2AudienceNotAnOriginScenario(profile), rule2AudienceOtherSchemeScenario(profile)];
}
