// Verification rules 1 to 7, authentication rules 2 and 3, the canonical string, the session proof
// and resolution, as black-box behaviour: each scenario starts its own transaction, delivers one
// approval of it that a rule must refuse (re-signed by the harness when the change is to a signed
// field, so only the rule under test can refuse it), checks the login did not complete, then
// delivers the genuine approval, which must still complete (bad input loses nothing, and a
// refused approval spends no nonce). Each scenario is judged twice: by the document's rule (a 4xx
// and no completion: MUST) and by this project's codes (exact status and `error` code,
// ns.delivery.reject-status and ns.errors.codes), so an RP with its own codes can list the second
// kind as expected failures without hiding the first.
import type { Profile } from '../../../../../protocol/common/profile.ts';
import type { Scenario } from './scenario.ts';
import { acceptScenarios } from './accept.ts';
import { rule1Scenarios } from './rule-1.ts';
import { rule2Scenarios } from './rule-2.ts';
import { rule3Scenarios } from './rule-3.ts';
import { rule4Scenarios } from './rule-4.ts';
import { bindingScenarios } from './binding.ts';
import { rule6Scenarios } from './rule-6.ts';
import { rule7Scenarios } from './rule-7.ts';
import { orderScenarios } from './order.ts';
import { swapScenarios } from './swap.ts';

export { runScenario, verificationChecks } from './checks.ts';
export { nonCanonicalS, type Scenario, type ScenarioResult } from './scenario.ts';

/** Every scenario, one file per rule. */
export function scenarios(profile: Profile): Scenario[] {
  return [
    ...acceptScenarios(profile),
    ...rule1Scenarios(profile),
    ...rule2Scenarios(profile),
    ...rule3Scenarios(profile),
    ...rule4Scenarios(profile),
    ...bindingScenarios(profile),
    ...rule6Scenarios(profile),
    ...rule7Scenarios(profile),
    ...swapScenarios(profile),
    ...orderScenarios(profile),
  ];
}
