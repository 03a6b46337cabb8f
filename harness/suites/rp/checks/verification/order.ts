// The order of the rules (ns.verify.order): the cheaper rule refuses first.
import type { Profile } from '../../../../../protocol/common/profile.ts';
import { sign } from '../../driver.ts';
import { type Scenario, flipBit, R, foreignOrigin } from './scenario.ts';

function orderAudienceBeforeResolutionScenario(profile: Profile): Scenario {
  return {
    name: 'order/audience-before-resolution',
    title: 'a misaddressed approval by an identity whose authority hangs is refused at once by rule 2 (no lookup)',
    rules: ['ns.auth.3', 'ns.verify.order', 'ns.verify.2'],
    expect: R(400, 'audience_mismatch'),
    cells: [{ rule: 'ns.verify.order', facet: 'audience-before-resolution', value: 'both-faults' }],
    build: async (m) => {
      const other = await m.s.identity();
      await m.s.target.authority.fault(other.identity, { timeout: 'both' });
      return sign(profile, { ...m.request, audience: foreignOrigin }, other);
    },
  };
}

function orderVersionBeforeSignatureScenario(profile: Profile): Scenario {
  return {
    name: 'order/version-before-signature',
    title: 'an approval failing rule 1 and rule 7 is refused by rule 1',
    rules: ['ns.auth.3', 'ns.verify.order', 'ns.verify.1'],
    expect: R(400, 'unsupported_version'),
    build: (m) => ({ ...m.genuine, [profile.ids.auth_field]: '2', signature: flipBit(m.genuine.signature as string, 3) }),
  };
}

/** In the order the checks run. */
export function orderScenarios(profile: Profile): Scenario[] {
  return [orderAudienceBeforeResolutionScenario(profile), orderVersionBeforeSignatureScenario(profile)];
}
