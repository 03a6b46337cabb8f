// Verification rule 1: the shape and the version of the approval.
import type { Profile } from '../../../../../protocol/common/profile.ts';
import { type Scenario, resign, signedWith, without, R } from './scenario.ts';

function rule1VersionScenario(profile: Profile): Scenario {
  return {
    name: '1/version',
    title: `${profile.ids.auth_field} "2" (re-signed) is refused`,
    rules: ['ns.verify.1', 'ns.version.1'],
    context: ['ns.request.version'],
    expect: R(400, 'unsupported_version'),
    build: (m) => signedWith(m, { [profile.ids.auth_field]: '2' }),
  };
}

function rule1MissingNonceScenario(_profile: Profile): Scenario {
  return {
    name: '1/missing-nonce',
    title: 'an approval without nonce is refused',
    rules: ['ns.verify.1'],
    context: ['ns.request.nonce', 'ns.response.fields'],
    expect: R(400, 'missing_field', 'malformed_response'),
    build: (m) => without(m, 'nonce'),
  };
}

function rule1MissingRequestIdScenario(_profile: Profile): Scenario {
  return {
    name: '1/missing-request-id',
    title: 'an approval without request_id is refused',
    rules: ['ns.verify.1'],
    context: ['ns.request.request-id', 'ns.response.fields'],
    expect: R(400, 'missing_field', 'malformed_response'),
    build: (m) => without(m, 'request_id'),
  };
}

function rule1MissingSignatureScenario(_profile: Profile): Scenario {
  return {
    name: '1/missing-signature',
    title: 'an approval without signature is refused',
    rules: ['ns.verify.1'],
    context: ['ns.response.signature', 'ns.response.fields'],
    expect: R(400, 'missing_field', 'malformed_response'),
    build: (m) => without(m, 'signature'),
  };
}

function rule1MissingIdentityScenario(_profile: Profile): Scenario {
  return {
    name: '1/missing-identity',
    title: 'an approval without identity is refused',
    rules: ['ns.verify.1'],
    context: ['ns.response.fields'],
    expect: R(400, 'missing_field', 'malformed_response'),
    build: (m) => without(m, 'identity', false),
  };
}

function rule1InvalidIdentityScenario(profile: Profile): Scenario {
  return {
    name: '1/invalid-identity',
    title: 'an identity that is not a valid service name (re-signed) is refused',
    rules: ['ns.verify.1'],
    context: ['ns.response.identity'],
    expect: R(400, 'invalid_identity'),
    build: (m) => resign(profile, { ...m.genuine, identity: 'not_a valid name' }, m.who.seed),
  };
}

function identityInnerSpaceScenario(_profile: Profile): Scenario {
  return {
    name: 'identity/inner-space',
    title: 'an identity with a space inside it (signed without) is refused: only surrounding spaces are trimmed',
    rules: ['ns.response.identity'],
    context: ['ns.verify.1', 'ns.canonical.lines'],
    expect: R(400, 'invalid_identity'),
    cells: [{ rule: 'ns.response.identity', facet: 'normalization', value: 'near-miss' }],
    build: (m) => ({ ...m.genuine, identity: m.who.identity.replace('.', ' .') }),
  };
}

/** In the order the checks run. */
export function rule1Scenarios(profile: Profile): Scenario[] {
  return [
    rule1VersionScenario(profile),
    rule1MissingNonceScenario(profile),
    rule1MissingRequestIdScenario(profile),
    rule1MissingSignatureScenario(profile),
    rule1MissingIdentityScenario(profile),
    rule1InvalidIdentityScenario(profile),
    identityInnerSpaceScenario(profile),
  ];
}
