// Verification rule 6: resolving the identity (DNS, the HTTPS document, a hanging authority).
import { randomBytes } from 'node:crypto';
import type { Profile } from '../../../../../protocol/common/profile.ts';
import { sign } from '../../driver.ts';
import { type Scenario, R } from './scenario.ts';

function rule6UnknownIdentityScenario(profile: Profile): Scenario {
  return {
    name: '6/unknown-identity',
    title: 'an approval by an identity nobody publishes is refused',
    rules: ['ns.verify.6'],
    context: ['ns.resolve.chain'],
    expect: R(401, 'resolution_failed'),
    build: (m) => sign(profile, m.request, { identity: `nobody-${randomBytes(5).toString('hex')}.${m.who.identity.split('.').slice(1).join('.')}`, seed: new Uint8Array(randomBytes(32)) }),
  };
}

function rule6DnsHttpsDisagreeScenario(profile: Profile): Scenario {
  return {
    name: '6/dns-https-disagree',
    title: 'when DNS and the identity document name different keys the approval is refused (fail closed)',
    rules: ['ns.verify.6'],
    context: ['ns.resolve.chain'],
    expect: R(401, 'key_mismatch'),
    build: async (m) => {
      const other = await m.s.identity();
      await m.s.target.authority.fault(other.identity, { dnsKey: true });
      return sign(profile, m.request, other);
    },
  };
}

function rule6RecordsDroppedScenario(profile: Profile): Scenario {
  return {
    name: '6/records-dropped',
    title: 'an approval by an identity whose records were dropped is refused',
    rules: ['ns.verify.6'],
    context: ['ns.resolve.chain'],
    expect: R(401, 'resolution_failed'),
    build: async (m) => {
      const other = await m.s.identity();
      await m.s.target.authority.drop(other.identity, 'both');
      return sign(profile, m.request, other);
    },
  };
}

function resolveDocumentBadSignatureScenario(profile: Profile): Scenario {
  return {
    name: 'resolve/document-bad-signature',
    title: 'an identity document whose signature does not verify fails resolution (no fall back to DNS)',
    rules: ['ns.resolve.document-signature'],
    context: ['ns.verify.6', 'ns.resolve.chain', 'ns.identity-document.format'],
    expect: R(401, 'resolution_failed', 'key_mismatch'),
    build: async (m) => {
      const other = await m.s.identity();
      await m.s.target.authority.fault(other.identity, { badSignature: true });
      return sign(profile, m.request, other);
    },
  };
}

function rule6AuthorityTimeoutScenario(profile: Profile): Scenario {
  return {
    name: '6/authority-timeout',
    title: 'an authority that never answers makes the approval refused, not completed',
    rules: ['ns.verify.6'],
    expect: R(401, 'resolution_failed'),
    build: async (m) => {
      const other = await m.s.identity();
      await m.s.target.authority.fault(other.identity, { timeout: 'both' });
      return sign(profile, m.request, other);
    },
  };
}

/** In the order the checks run. */
export function rule6Scenarios(profile: Profile): Scenario[] {
  return [
    rule6UnknownIdentityScenario(profile),
    rule6DnsHttpsDisagreeScenario(profile),
    rule6RecordsDroppedScenario(profile),
    resolveDocumentBadSignatureScenario(profile),
    rule6AuthorityTimeoutScenario(profile),
  ];
}
