// The order of the rules (ns.verify.order): the cheaper rule refuses first.
import type { Profile } from '../../../../../protocol/common/profile.ts';
import { CheckFailure, accepted, said, sign } from '../../driver.ts';
import { type Scenario, flipBit, R, foreignOrigin } from './scenario.ts';

function orderAudienceBeforeResolutionScenario(profile: Profile): Scenario {
  return {
    name: 'order/audience-before-resolution',
    title: 'a misaddressed approval by an identity whose authority hangs is refused at once by rule 2 (no lookup)',
    rules: ['ns.auth.3', 'ns.verify.order', 'ns.verify.2'],
    expect: R(400, 'audience_mismatch'),
    cells: [
      { rule: 'ns.verify.order', facet: 'audience-before-resolution', value: 'both-faults' },
      { rule: 'ns.auth.3', facet: 'audience-before-resolution', value: 'both-faults' },
    ],
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
    title: 'an approval failing rule 1 and rule 7, by an identity whose authority hangs, is refused at once by rule 1 (no lookup, so no signature check)',
    rules: ['ns.auth.3', 'ns.verify.order', 'ns.verify.1'],
    expect: R(400, 'unsupported_version'),
    cells: [
      { rule: 'ns.verify.order', facet: 'version-before-signature', value: 'both-faults' },
      { rule: 'ns.auth.3', facet: 'version-before-signature', value: 'both-faults' },
    ],
    build: async (m) => {
      // The signature is checked against the key resolution finds: a refusal that waited for the
      // hanging authority checked the signature (or looked the key up for it) before the version.
      const other = await m.s.identity();
      await m.s.target.authority.fault(other.identity, { timeout: 'both' });
      const approval = sign(profile, m.request, other);
      return { ...approval, [profile.ids.auth_field]: '2', signature: flipBit(approval.signature as string, 3) };
    },
  };
}

function orderNonceBeforeResolutionScenario(profile: Profile): Scenario {
  return {
    name: 'order/nonce-before-resolution',
    title: "an approval already accepted, replayed once its identity's authority hangs, is refused at once (no lookup)",
    rules: ['ns.auth.3', 'ns.verify.order'],
    context: ['ns.verify.5', 'ns.transaction.one-approval'],
    expect: R(409, 'nonce_replayed', 'already_approved'),
    cells: [
      { rule: 'ns.verify.order', facet: 'nonce-before-resolution', value: 'both-faults' },
      { rule: 'ns.auth.3', facet: 'nonce-before-resolution', value: 'both-faults' },
    ],
    build: async (m) => {
      // Both faults: the nonce is spent (a second transaction approved by another identity) and
      // that identity's authority now hangs, so only a refusal before resolution answers at once.
      const other = await m.s.identity();
      const second = await m.s.start();
      const approval = sign(profile, second.request, other);
      const first = await m.s.deliver(second.request, approval);
      if (!accepted(first)) throw new CheckFailure(`the genuine approval of a second transaction was refused: ${said(first)}`);
      await m.s.target.authority.fault(other.identity, { timeout: 'both' });
      return approval;
    },
  };
}

/** In the order the checks run. */
export function orderScenarios(profile: Profile): Scenario[] {
  return [orderAudienceBeforeResolutionScenario(profile), orderVersionBeforeSignatureScenario(profile), orderNonceBeforeResolutionScenario(profile)];
}
