// The ID the user types (document 2, Identifier forms), observed where the bridge takes it: the
// transaction's ID entry (ob.contract.transaction). An accepted form must resolve to the test
// identity, so acceptance proves the normalization; a refused form leaves the transaction in
// `identify`. And login_hint: it may supply the ID, and never breaks the flow.
import type { Check } from '../../../run/model.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { decodeJwt } from 'jose';
import { bridgeCheck } from '../check.ts';
import { said, type BridgeSession, type BridgeTarget } from '../driver.ts';

interface Case {
  rule: RuleId;
  input: (id: string) => string;
  accept: boolean;
  what: string;
  /** The normalization cells this case fills (spec/facets/bridge.yaml): [rule, form or near-miss]. */
  cells?: Array<[RuleId, string]>;
}

const CASES: Case[] = [
  {
    // A valid service name the authority publishes nothing for: it normalizes, it does not resolve.
    rule: 'ob.transaction.identify',
    input: (id) => `nobody-${id}`,
    accept: false,
    what: 'a valid name that resolves to no identity',
  },
  {
    rule: 'ob.id-input.case.uppercase',
    input: (id) => id.toUpperCase(),
    accept: true,
    what: 'uppercase',
    cells: [
      ['ob.id-input.order', 'uppercase'],
      ['ob.id-input.case.uppercase', 'uppercase'],
    ],
  },
  {
    rule: 'ob.id-input.case.trailing-dot',
    input: (id) => `${id}.`,
    accept: true,
    what: 'a trailing dot',
    cells: [
      ['ob.id-input.order', 'trailing-dot'],
      ['ob.id-input.case.trailing-dot', 'trailing-dot'],
      ['ob.id-input.lowercase', 'trailing-dot'],
    ],
  },
  // "remove one trailing dot": two are not the name.
  {
    rule: 'ob.id-input.case.trailing-dot',
    input: (id) => `${id}..`,
    accept: false,
    what: 'two trailing dots',
    cells: [
      ['ob.id-input.case.trailing-dot', 'near-miss'],
      ['ob.id-input.lowercase', 'near-miss'],
    ],
  },
  {
    rule: 'ob.id-input.case.leading-at',
    input: (id) => `@${id}`,
    accept: true,
    what: 'a leading @',
    cells: [
      ['ob.id-input.order', 'leading-at'],
      ['ob.id-input.case.leading-at', 'leading-at'],
      ['ob.id-input.trim', 'leading-at'],
    ],
  },
  // "strip one leading @": two are not the name.
  {
    rule: 'ob.id-input.case.leading-at',
    input: (id) => `@@${id}`,
    accept: false,
    what: 'two leading @',
    cells: [
      ['ob.id-input.case.leading-at', 'near-miss'],
      ['ob.id-input.trim', 'near-miss'],
    ],
  },
  {
    rule: 'ob.id-input.trim',
    input: (id) => `  ${id}\t`,
    accept: true,
    what: 'surrounding white space',
    cells: [
      ['ob.id-input.order', 'whitespace'],
      ['ob.id-input.trim', 'whitespace'],
    ],
  },
  {
    rule: 'ob.id-input.case.https-url',
    input: (id) => `https://${id}/`,
    accept: true,
    what: 'an https URL with a slash',
    cells: [
      ['ob.id-input.order', 'https-url-slash'],
      ['ob.id-input.case.https-url', 'https-url-slash'],
      ['ob.id-input.case.url-path', 'root-path'],
      ['ob.id-input.case.url-port', 'no-port'],
      ['ob.id-input.url', 'https-host'],
    ],
  },
  {
    rule: 'ob.id-input.case.https-url',
    input: (id) => `https://${id}`,
    accept: true,
    what: 'an https URL without a slash',
    cells: [
      ['ob.id-input.order', 'https-url'],
      ['ob.id-input.case.https-url', 'https-url'],
      ['ob.id-input.case.url-path', 'empty-path'],
    ],
  },
  { rule: 'ob.id-input.lowercase', input: (id) => `HTTPS://${id.toUpperCase()}.`, accept: true, what: 'an uppercase URL with a trailing dot', cells: [['ob.id-input.lowercase', 'uppercase']] },
  { rule: 'ob.id-input.order', input: (id) => ` @https://${id.toUpperCase()}/ `, accept: true, what: 'white space, @ and an uppercase URL together' },
  {
    rule: 'ob.id-input.case.url-path',
    input: (id) => `https://${id}/profile`,
    accept: false,
    what: 'a URL with a path',
    cells: [
      ['ob.id-input.order', 'near-miss'],
      ['ob.id-input.case.url-path', 'near-miss'],
      ['ob.id-input.case.https-url', 'near-miss'],
    ],
  },
  { rule: 'ob.id-input.case.url-port', input: (id) => `https://${id}:8443/`, accept: false, what: 'a URL with a port', cells: [['ob.id-input.case.url-port', 'near-miss']] },
  { rule: 'ob.id-input.url', input: (id) => `https://user@${id}/`, accept: false, what: 'a URL with userinfo', cells: [['ob.id-input.url', 'near-miss']] },
  { rule: 'ob.id-input.url', input: (id) => `https://${id}/?x=1`, accept: false, what: 'a URL with a query', cells: [['ob.id-input.url', 'near-miss']] },
  { rule: 'ob.id-input.case.single-label', input: (id) => id.split('.')[0]!, accept: false, what: 'a single label' },
  { rule: 'ob.id-input.case.non-ascii', input: (id) => `ü${id}`, accept: false, what: 'a non-ASCII letter' },
  { rule: 'ob.id-input.valid-name', input: (id) => `-${id}`, accept: false, what: 'a label starting with a hyphen' },
  { rule: 'ob.id-input.no-alias', input: (id) => `www.${id}`, accept: false, what: 'a www. name' },
];

/** Each cell once: several cases may fill the same one. */
const cellsOf = (cases: Case[]) =>
  [...new Set(cases.flatMap((c) => (c.cells ?? []).map(([rule, value]) => `${rule} ${value}`)))].map((k) => {
    const [rule, value] = k.split(' ') as [RuleId, string];
    return { rule, facet: 'normalization', value, operation: 'identify' };
  });

async function enter(s: BridgeSession, input: string): Promise<{ accepted: boolean; told: boolean; detail: string }> {
  const { user, txUrl } = await s.startSignIn();
  const out = await s.post(user.browser, `${txUrl}/identify`, { id: input });
  const after = (await s.view(user.browser, txUrl)).view;
  const accepted = after.state === 'awaiting_signature';
  // "Rejected": the user is told so, a 4xx, and the transaction waits for another ID.
  const told = accepted || (out.res.status >= 400 && out.res.status < 500 && after.state === 'identify');
  return { accepted, told, detail: `${said(out.res)}; the transaction is ${String(after.state)}` };
}

export function idInputChecks(t: BridgeTarget): Check[] {
  const rules = [...new Set(CASES.map((c) => c.rule))];
  return [
    bridgeCheck(t, {
      id: 'bridge/id-input/normalization',
      title: 'typed IDs are normalized (trim, @, URL host, lowercase, trailing dot) and refused, with a 4xx, when not a valid service name or when they resolve to no identity',
      rules: [...rules, 'ob.id-input.case.http-url'],
      cells: cellsOf(CASES),
      context: ['ob.contract.transaction'],
      run: async (s, e) => {
        const { identity } = await t.authority.newIdentity();
        for (const c of CASES) {
          const got = await enter(s, c.input(identity));
          e.that(got.accepted === c.accept, `${c.what} (${JSON.stringify(c.input(identity))}) was ${got.accepted ? 'accepted' : 'refused'}: ${got.detail}`);
          e.that(got.told, `${c.what} (${JSON.stringify(c.input(identity))}) was refused without a 4xx, or the transaction moved: ${got.detail}`);
        }
        // http: refused, except with the development flag (an http issuer is local development).
        const http = await enter(s, `http://${identity}/`);
        if (t.issuer.startsWith('https:')) e.that(!http.accepted, `an http URL was accepted by an https issuer: ${http.detail}`);
        else e.that(http.accepted, `an http URL was refused in development (http issuer): ${http.detail}`);
      },
    }),
    bridgeCheck(t, {
      id: 'bridge/id-input/xn-label',
      title: 'an ID with an xn-- label is accepted as typed, and the same label in Unicode is refused',
      rules: ['ob.id-input.case.xn-label', 'ob.id-input.order', 'ob.id-input.valid-name', 'ob.id-input.projections'],
      cells: [
        { rule: 'ob.id-input.order', facet: 'normalization', value: 'xn-label', operation: 'identify' },
        { rule: 'ob.id-input.case.xn-label', facet: 'normalization', value: 'xn-label', operation: 'identify' },
        { rule: 'ob.id-input.case.xn-label', facet: 'normalization', value: 'near-miss', operation: 'identify' },
      ],
      context: ['ob.contract.transaction'],
      run: async (s, e) => {
        const { identity, seed } = await t.authority.newIdentity({ label: 'xn--bcher-kva', zone: `z${Math.random().toString(36).slice(2, 10)}.id.test` });
        const got = await enter(s, identity);
        e.that(got.accepted, `${identity} was refused: ${got.detail}`);
        // The same label in Unicode: "no Unicode-to-punycode conversion".
        const unicode = identity.replace('xn--bcher-kva', 'bücher');
        const converted = await enter(s, unicode);
        e.that(!converted.accepted, `${unicode} (the Unicode form of ${identity}) was accepted: ${converted.detail}`);
        // The projections of document 2: the profile URL is https://<id>/ wherever it is released.
        const { body } = await s.tokens({ scope: `openid ${t.profile.ids.id_scope}`, user: { key: { identity, seed }, browser: (await s.newUser()).browser } });
        const url = `https://${identity}/`;
        const claim = decodeJwt(String(body.id_token))[t.profile.ids.id_url_claim];
        e.that(claim === undefined || claim === url, `the ID token's ${t.profile.ids.id_url_claim} is ${JSON.stringify(claim)}, not ${url}`);
        e.that(body.me === undefined || body.me === url, `the profile URL projection (me) is ${JSON.stringify(body.me)}, not ${url}`);
      },
    }),
    bridgeCheck(t, {
      id: 'bridge/authorize/login-hint',
      title: 'login_hint may supply the ID; a hint never stops the sign-in',
      rules: ['ob.authorize.login-hint'],
      run: async (s, e) => {
        const user = await s.newUser();
        const r = await s.signIn({ user, extra: { login_hint: user.key.identity } });
        e.that(r.response.code !== undefined, `a sign-in with login_hint did not end in a code: ${r.response.location}`);
        const bad = await s.signIn({ extra: { login_hint: 'not a valid id!' } });
        e.that(bad.response.code !== undefined, `an unusable login_hint stopped the sign-in: ${bad.response.location}`);
      },
    }),
  ];
}
