// Verification rule 4: the validity window.
import type { Profile } from '../../../../../protocol/common/profile.ts';
import { formatRfc3339 } from '../../../../../protocol/common/time.ts';
import { isoShift } from '../../driver.ts';
import { type Scenario, now, skew, win, signedWith, R } from './scenario.ts';

function rule4ExpiredScenario(_profile: Profile): Scenario {
  return {
    name: '4/expired',
    title: 'an approval past its expires_at (re-signed) is refused and the transaction does not complete',
    rules: ['ns.verify.4', 'ns.transaction.expiry'],
    context: ['ns.request.timestamps'],
    expect: R(400, 'expired'),
    cells: [
      { rule: 'ns.verify.4', facet: 'expiry', value: 'outside' },
      { rule: 'ns.transaction.expiry', facet: 'window', value: 'outside' },
    ],
    build: (m) => signedWith(m, { issued_at: formatRfc3339(now() - (win - 30) * 1000), expires_at: formatRfc3339(now() - 30_000) }),
  };
}

function rule4WindowTooLongScenario(_profile: Profile): Scenario {
  return {
    name: '4/window-too-long',
    title: `a window of ${win + 1} s (re-signed) is refused`,
    rules: ['ns.verify.4', 'ns.limits.window'],
    context: ['ns.request.window'],
    expect: R(400, 'window_too_long'),
    cells: [
      { rule: 'ns.verify.4', facet: 'span', value: 'outside' },
      { rule: 'ns.limits.window', facet: 'window', value: 'outside' },
    ],
    build: (m) => signedWith(m, { expires_at: isoShift(m.request.issued_at, win + 1) }),
  };
}

function rule4IssuedInFutureScenario(_profile: Profile): Scenario {
  return {
    name: '4/issued-in-future',
    title: `issued_at ${skew + 60} s ahead (re-signed) is refused`,
    rules: ['ns.verify.4', 'ns.limits.clock-skew'],
    expect: R(400, 'issued_in_future'),
    cells: [
      { rule: 'ns.verify.4', facet: 'skew', value: 'outside' },
      { rule: 'ns.limits.clock-skew', facet: 'window', value: 'outside' },
    ],
    build: (m) => signedWith(m, { issued_at: formatRfc3339(now() + (skew + 60) * 1000), expires_at: formatRfc3339(now() + (skew + 120) * 1000) }),
  };
}

function rule4NotRfc3339Scenario(_profile: Profile): Scenario {
  return {
    name: '4/not-rfc3339',
    title: 'an issued_at that is not RFC 3339 (re-signed) is refused',
    rules: ['ns.verify.4', 'ns.request.timestamps'],
    expect: R(400, 'invalid_timestamp'),
    build: (m) => signedWith(m, { issued_at: (m.request.issued_at as string).replace('T', ' ') }),
  };
}

function rule4ExpiresBeforeIssuedScenario(_profile: Profile): Scenario {
  return {
    name: '4/expires-before-issued',
    title: 'expires_at before issued_at (re-signed) is refused',
    rules: ['ns.verify.4'],
    expect: R(400, 'window_invalid', 'invalid_timestamp'),
    build: (m) => signedWith(m, { issued_at: m.request.expires_at, expires_at: m.request.issued_at }),
  };
}

/** In the order the checks run. */
export function rule4Scenarios(profile: Profile): Scenario[] {
  return [rule4ExpiredScenario(profile), rule4WindowTooLongScenario(profile), rule4IssuedInFutureScenario(profile), rule4NotRfc3339Scenario(profile), rule4ExpiresBeforeIssuedScenario(profile)];
}
