// An enrollment's fields across their values (issue 25's whole-area run of keystore.ts): every
// kind, wrap and role document 3 lists is taken and listed as sent, `role` defaulting to `device`;
// the project's limits on each field at N and N+1, its reserved ids and its replacing PUT are
// profile (ra.keystore.enrollment-shape), as is what `last_used_at` records (ra.keystore.last-used).
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { SoftwareAuthenticator, type EnrollmentInput } from '../../../actors/relay/index.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { vocabulary } from '../../../../schemas/ts/vocabulary.ts';
import { relayCheck } from '../check.ts';
import { codeOf, said, type RelayTarget } from '../driver.ts';
import { enrolled, enrollmentInput, fetched, fetchWith, LANE, listedRows } from './keystore.ts';

/** A wrapped object of exactly `n` bytes as sent. */
const wrappedOf = (n: number): string => {
  const head = '{"iv":"AAAA","ciphertext":"';
  return `${head}${'A'.repeat(n - head.length - 2)}"}`;
};

function enrollValuesCheck(t: RelayTarget): Check {
  const { keystore_kinds: kinds, keystore_wraps: wraps, keystore_roles: roles } = vocabulary;
  return relayCheck(t, {
    id: 'relay/keystore/enroll-values',
    lane: LANE,
    title:
      'every kind, wrap and role document 3 lists is enrolled (200) and listed as sent, with its label; an enrollment without role is listed as `device`; has_passkey is true exactly for the one sent with a credential',
    rules: ['ra.keystore.enroll', 'ra.keystore.list'],
    run: async (s, e) => {
      const id = await s.identity();
      const auth = new SoftwareAuthenticator(-8);
      const sent: EnrollmentInput[] = [
        ...kinds.values.map((kind, i) => enrollmentInput({ kind, wrap: wraps.values[i % wraps.values.length]!, label: `kind ${kind}` })),
        ...wraps.values.map((wrap) => enrollmentInput({ wrap, label: `wrap ${wrap}` })),
        ...roles.values.map((role) => enrollmentInput({ role, label: `role ${role}` })),
        enrollmentInput({ kind: 'passkey', wrap: 'prf', ...auth.credential(), label: 'with a credential' }),
      ];
      for (const x of sent) {
        const r = await s.relay.keystoreEnroll(id, x);
        if (!e.that(r.status === 200, `an enrollment of kind ${x.kind}, wrap ${x.wrap}${x.role ? `, role ${x.role}` : ''}: ${said(r)}, not 200`)) return;
      }
      const rows = await listedRows(s, id);
      for (const x of sent) {
        const row = rows.find((r) => r.enrollment_id === x.enrollment_id);
        const want = { kind: x.kind, wrap: x.wrap, label: x.label, role: x.role ?? 'device', has_passkey: x.credential_id !== undefined };
        const got = row && Object.fromEntries(Object.keys(want).map((k) => [k, row[k]]));
        e.that(
          JSON.stringify(got) === JSON.stringify(want) && typeof row?.created_at === 'string',
          `${x.label} is listed as ${JSON.stringify(row)}, not with ${JSON.stringify(want)} and a created_at`,
        );
      }
    },
  });
}

/** An enrollment with one field of another JSON type than document 3's table gives, or outside its listed values. */
const FORMS: { what: string; input: (auth: SoftwareAuthenticator) => EnrollmentInput }[] = [
  { what: 'an enrollment_id that is a number', input: () => ({ ...enrollmentInput(), enrollment_id: 7 as unknown as string }) },
  { what: 'a kind that is a number', input: () => ({ ...enrollmentInput(), kind: 7 as unknown as string }) },
  { what: 'a kind no document lists (passkeys)', input: () => enrollmentInput({ kind: 'passkeys' }) },
  { what: 'a kind in capitals (PASSKEY)', input: () => enrollmentInput({ kind: 'PASSKEY' }) },
  { what: 'a wrap that is a list', input: () => ({ ...enrollmentInput(), wrap: ['prf'] as unknown as string }) },
  { what: 'a wrap no document lists (aes)', input: () => enrollmentInput({ wrap: 'aes' }) },
  { what: 'a role that is true', input: () => ({ ...enrollmentInput(), role: true as unknown as string }) },
  { what: 'a role no document lists (recovery)', input: () => enrollmentInput({ role: 'recovery' }) },
  { what: 'a label that is a number', input: () => ({ ...enrollmentInput(), label: 7 as unknown as string }) },
  { what: 'a wrapped list', input: () => enrollmentInput({ wrapped: '["iv","ciphertext"]' }) },
  { what: 'a wrapped string', input: () => enrollmentInput({ wrapped: '"iv.ciphertext"' }) },
  { what: 'a credential_alg no document lists (-35)', input: (a) => enrollmentInput({ kind: 'passkey', wrap: 'prf', ...a.credential(), credential_alg: -35 }) },
  { what: 'a credential_alg that is a string', input: (a) => ({ ...enrollmentInput({ kind: 'passkey', wrap: 'prf', ...a.credential() }), credential_alg: '-7' as unknown as number }) },
  {
    what: 'a credential_public_key that is no SPKI key',
    input: (a) => enrollmentInput({ kind: 'passkey', wrap: 'prf', ...a.credential(), credential_public_key: randomBytes(91).toString('base64url') }),
  },
  { what: 'an ES256 key named as credential_alg -8', input: (a) => enrollmentInput({ kind: 'passkey', wrap: 'prf', ...a.credential(), credential_alg: -8 }) },
  { what: 'a credential_id out of base64url', input: (a) => enrollmentInput({ kind: 'passkey', wrap: 'prf', ...a.credential(), credential_id: 'not base64url!' }) },
];

function enrollFieldFormsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/enroll-field-forms',
    lane: LANE,
    title:
      "an enrollment with one field of another type than document 3's table gives, or outside its listed values (kind, wrap, role, credential_alg, an SPKI key of that algorithm, base64url), is refused with a 4xx and never listed",
    rules: ['ra.keystore.enroll', 'ra.errors.listed-statuses'],
    run: async (s, e) => {
      const id = await s.identity();
      const auth = new SoftwareAuthenticator(-7);
      const sent = FORMS.map((x) => ({ ...x, input: x.input(auth) }));
      for (const x of sent) {
        const r = await s.relay.keystoreEnroll(id, x.input);
        e.that(r.status >= 400 && r.status < 500, `${x.what}: ${said(r)}, not a 4xx`);
      }
      const ids = new Set((await listedRows(s, id)).map((r) => r.enrollment_id));
      const kept = sent.filter((x) => ids.has(x.input.enrollment_id));
      e.that(kept.length === 0, `the list holds ${kept.map((x) => x.what).join('; ')}`);
    },
  });
}

/** One field of an enrollment at the project's limit (taken) and past it, or in a form refused. */
interface Shape {
  what: string;
  input: (auth: SoftwareAuthenticator) => EnrollmentInput;
  taken: boolean;
  /** The body as sent, edited after signing. */
  text?: (sent: string, wrapped: string) => string;
}

const SHAPES: Shape[] = [
  { what: 'an enrollment_id of 64 characters', input: () => enrollmentInput({ enrollment_id: `e${'x'.repeat(63)}` }), taken: true },
  { what: 'an enrollment_id of 65 characters', input: () => enrollmentInput({ enrollment_id: `e${'x'.repeat(64)}` }), taken: false },
  { what: 'an enrollment_id of A-Z a-z 0-9 _ -', input: () => enrollmentInput({ enrollment_id: `Az09_-${randomBytes(4).toString('hex')}` }), taken: true },
  { what: 'an enrollment_id with a dot', input: () => enrollmentInput({ enrollment_id: `enr.${randomBytes(4).toString('hex')}` }), taken: false },
  { what: 'an empty enrollment_id', input: () => enrollmentInput({ enrollment_id: '' }), taken: false },
  { what: 'the enrollment_id list', input: () => enrollmentInput({ enrollment_id: 'list' }), taken: false },
  { what: 'the enrollment_id fetch', input: () => enrollmentInput({ enrollment_id: 'fetch' }), taken: false },
  { what: `a wrapped object of ${limits.keystore_wrapped_max_bytes} bytes`, input: () => enrollmentInput({ wrapped: wrappedOf(limits.keystore_wrapped_max_bytes) }), taken: true },
  { what: `a wrapped object of ${limits.keystore_wrapped_max_bytes + 1} bytes`, input: () => enrollmentInput({ wrapped: wrappedOf(limits.keystore_wrapped_max_bytes + 1) }), taken: false },
  { what: `a label of ${limits.keystore_label_max_bytes} bytes`, input: () => enrollmentInput({ label: 'é'.repeat(limits.keystore_label_max_bytes / 2) }), taken: true },
  { what: `a label of ${limits.keystore_label_max_bytes + 1} bytes`, input: () => enrollmentInput({ label: `${'é'.repeat(limits.keystore_label_max_bytes / 2)}x` }), taken: false },
  {
    what: `a credential_id of ${limits.keystore_credential_id_max_bytes} bytes`,
    input: (a) => enrollmentInput({ kind: 'passkey', wrap: 'prf', ...a.credential(), credential_id: randomBytes(limits.keystore_credential_id_max_bytes).toString('base64url') }),
    taken: true,
  },
  {
    what: `a credential_id of ${limits.keystore_credential_id_max_bytes + 1} bytes`,
    input: (a) => enrollmentInput({ kind: 'passkey', wrap: 'prf', ...a.credential(), credential_id: randomBytes(limits.keystore_credential_id_max_bytes + 1).toString('base64url') }),
    taken: false,
  },
  { what: 'a label of null (as if left out)', input: () => ({ ...enrollmentInput(), label: null as unknown as string }), taken: true },
  { what: 'an empty credential_id', input: (a) => enrollmentInput({ kind: 'passkey', wrap: 'prf', ...a.credential(), credential_id: '' }), taken: false },
  { what: 'a credential_id without its credential_public_key', input: (a) => enrollmentInput({ kind: 'passkey', wrap: 'prf', credential_id: a.credentialId }), taken: false },
  { what: 'no wrapped', input: () => enrollmentInput(), taken: false, text: (sent, w) => sent.replace(`{"wrapped":${w},`, '{') },
  { what: 'wrapped sent twice', input: () => enrollmentInput(), taken: false, text: (sent, w) => sent.replace(`{"wrapped":${w},`, `{"wrapped":${w},"wrapped":${w},`) },

  { what: 'an ES256 key with credential_alg left out (-7 by default)', input: (a) => enrollmentInput({ kind: 'passkey', wrap: 'prf', ...a.credential(), credential_alg: undefined }), taken: true },
];

function enrollmentShapeCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/enrollment-shape',
    lane: LANE,
    title:
      "each enrollment field at the project's limit is taken and one past it refused 400 invalid_request, as are the reserved ids, other characters, and wrapped left out or sent twice; a refused one is never listed",
    rules: ['ra.keystore.enrollment-shape', 'ra.errors.invalid-request'],
    cells: ['at', 'past'].map((value) => ({ rule: 'ra.keystore.enrollment-shape' as const, facet: 'limit', value, operation: 'keystoreEnroll' })),
    run: async (s, e) => {
      const id = await s.identity();
      const auth = new SoftwareAuthenticator(-7);
      const sent = SHAPES.map((x) => ({ ...x, input: x.input(auth) }));
      for (const x of sent) {
        const edit = x.text;
        const r = await s.relay.keystoreEnroll(id, x.input, edit ? { text: (t) => edit(t, x.input.wrapped) } : {});
        e.that(x.taken ? r.status === 200 : r.status === 400 && codeOf(r) === 'invalid_request', `${x.what}: ${said(r)}, not ${x.taken ? 200 : '400 invalid_request'}`);
      }
      const ids = new Set((await listedRows(s, id)).map((r) => r.enrollment_id));
      const wrong = sent.filter((x) => ids.has(x.input.enrollment_id) !== x.taken && !['list', 'fetch', ''].includes(x.input.enrollment_id));
      e.that(wrong.length === 0, `the list ${wrong.map((x) => `${x.taken ? 'lacks' : 'holds'} ${x.what}`).join('; ')}`);
    },
  });
}

function replaceAndUseCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/enrollment-replace-use',
    lane: LANE,
    title: 'a second PUT of an enrollment_id replaces it (the list shows the second kind and label, once); last_used_at is null until the credential fetches, then set, and only on that enrollment',
    rules: ['ra.keystore.enrollment-shape', 'ra.keystore.last-used'],
    run: async (s, e) => {
      const passkey = await enrolled(s);
      const other = enrollmentInput({ label: 'untouched' });
      const first = enrollmentInput({ label: 'first' });
      const second = { ...enrollmentInput({ kind: 'native', wrap: 'native', label: 'second' }), enrollment_id: first.enrollment_id };
      for (const x of [other, first, second]) {
        const r = await s.relay.keystoreEnroll(passkey.id, x);
        if (!e.that(r.status === 200, `the enrollment labelled ${x.label}: ${said(r)}, not 200`)) return;
      }
      const before = await listedRows(s, passkey.id);
      const mine = before.filter((r) => r.enrollment_id === first.enrollment_id);
      e.that(
        mine.length === 1 && mine[0]!.kind === 'native' && mine[0]!.label === 'second',
        `after a second PUT of ${first.enrollment_id} the list holds ${JSON.stringify(mine)}, not the second once`,
      );
      const unused = before.filter((r) => r.last_used_at !== null);
      e.that(unused.length === 0, `before any fetch, last_used_at is set on ${JSON.stringify(unused)}`);
      if (!e.that(fetched(await fetchWith(s, passkey)), 'the passkey did not fetch')) return;
      const after = await listedRows(s, passkey.id);
      const used = after.filter((r) => r.last_used_at !== null).map((r) => r.enrollment_id);
      e.that(
        JSON.stringify(used) === JSON.stringify([passkey.input.enrollment_id]) && typeof after.find((r) => r.enrollment_id === passkey.input.enrollment_id)?.last_used_at === 'string',
        `after the passkey's fetch, last_used_at is set on ${JSON.stringify(used)}, not on ${passkey.input.enrollment_id} alone`,
      );
    },
  });
}

export function keystoreFieldChecks(t: RelayTarget): Check[] {
  return [enrollValuesCheck(t), enrollFieldFormsCheck(t), enrollmentShapeCheck(t), replaceAndUseCheck(t)];
}
