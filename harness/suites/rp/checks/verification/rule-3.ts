// Verification rule 3: the action, the statement and the scopes.
import type { Profile } from '../../../../../protocol/common/profile.ts';
import { limits } from '../../../../../schemas/ts/limits.ts';
import { vocabulary } from '../../../../../schemas/ts/vocabulary.ts';
import { type Scenario, resign, signedWith, R } from './scenario.ts';

function rule3UnknownActionScenario(_profile: Profile): Scenario {
  return {
    name: '3/unknown-action',
    title: 'an unknown action (re-signed) is refused',
    rules: ['ns.verify.3'],
    context: ['ns.request.action'],
    expect: R(400, 'unknown_action'),
    build: (m) => signedWith(m, { action: 'delete' }),
  };
}

function rule3StatementTooLongScenario(_profile: Profile): Scenario {
  return {
    name: '3/statement-too-long',
    title: `a statement of ${limits.statement_max_bytes + 1} bytes (re-signed) is refused`,
    rules: ['ns.verify.3', 'ns.limits.statement'],
    context: ['ns.request.statement'],
    expect: R(400, 'invalid_statement'),
    cells: [{ rule: 'ns.limits.statement', facet: 'limit', value: 'past' }],
    build: (m) => signedWith(m, { statement: 'é'.repeat(Math.floor(limits.statement_max_bytes / 2)) + 'x' }),
  };
}

function rule3StatementLineBreakScenario(_profile: Profile): Scenario {
  return {
    name: '3/statement-line-break',
    title: 'a statement with a line feed (re-signed) is refused',
    rules: ['ns.verify.3'],
    context: ['ns.request.statement'],
    expect: R(400, 'invalid_statement'),
    build: (m) => signedWith(m, { statement: 'Sign in\nnow' }),
  };
}

function rule3ScopesUnsortedScenario(profile: Profile): Scenario {
  return {
    name: '3/scopes-unsorted',
    title: 'unsorted scopes (signed as sent) are refused, never re-sorted',
    rules: ['ns.verify.3'],
    context: ['ns.request.scopes'],
    expect: R(400, 'scopes_not_canonical'),
    build: (m) => resign(profile, { ...m.genuine, scopes: [...vocabulary.scopes.values].sort().reverse() }, m.who.seed),
  };
}

function rule3ScopesDuplicateScenario(profile: Profile): Scenario {
  return {
    name: '3/scopes-duplicate',
    title: 'duplicate scopes (signed as sent) are refused',
    rules: ['ns.verify.3'],
    context: ['ns.request.scopes'],
    expect: R(400, 'scopes_not_canonical'),
    build: (m) => resign(profile, { ...m.genuine, scopes: [vocabulary.scopes.values[0], vocabulary.scopes.values[0]] }, m.who.seed),
  };
}

function rule3ScopeForeignScenario(profile: Profile): Scenario {
  return {
    name: '3/scope-foreign',
    title: 'a scope outside the RP namespace (re-signed) is refused',
    rules: ['ns.verify.3', 'ns.request.scope-namespace'],
    context: ['ns.request.scope-namespace-form', 'ns.request.scope-vocabulary'],
    expect: R(400, 'scope_not_allowed'),
    build: (m) => resign(profile, { ...m.genuine, scopes: ['dav:rw:apps/notes'] }, m.who.seed),
  };
}

function rule3ScopesTooManyScenario(profile: Profile): Scenario {
  return {
    name: '3/scopes-too-many',
    title: `${limits.scopes_max + 1} scopes (re-signed) are refused`,
    rules: ['ns.verify.3', 'ns.limits.scopes'],
    context: ['ns.request.scopes'],
    expect: R(400, 'scopes_not_canonical', 'scope_not_allowed'),
    build: (m) => resign(profile, { ...m.genuine, scopes: Array.from({ length: limits.scopes_max + 1 }, (_, i) => vocabulary.scopes.values[i < (limits.scopes_max + 1) / 2 ? 0 : 1]!) }, m.who.seed),
  };
}

/** In the order the checks run. */
export function rule3Scenarios(profile: Profile): Scenario[] {
  return [
    rule3UnknownActionScenario(profile),
    rule3StatementTooLongScenario(profile),
    rule3StatementLineBreakScenario(profile),
    rule3ScopesUnsortedScenario(profile),
    rule3ScopesDuplicateScenario(profile),
    rule3ScopeForeignScenario(profile),
    rule3ScopesTooManyScenario(profile),
  ];
}
