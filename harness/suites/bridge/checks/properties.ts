// Property checks of the bridge (fast-check through harness/run/property.ts: --seed, --runs and
// --replay apply). /authorize parameter fuzzing: a request whose client or redirect is not valid
// never sends the browser to the redirect URI; one that is refused after that point redirects
// with `error` and `iss`, never with a code; unknown scopes do not stop a valid request. And a
// model-based property (fast-check commands) over the transaction table: random sequences of
// user, signer and client actions, each checked against a model of the states, shrunk and
// replayable.
import fc from 'fast-check';
import type { Check } from '../../../run/model.ts';
import { cite } from '../../../run/cite.ts';
import { propertyCheck, type PropertyVerdict } from '../../../run/property.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { newPkce, type Pkce } from '../../../actors/oidc/client.ts';
import { BridgeSession, CheckFailure, said, type BridgeTarget, type User } from '../driver.ts';

function bridgeProperty<T>(
  target: BridgeTarget,
  spec: { id: string; title: string; rules: RuleId[]; context?: RuleId[]; arbitrary: fc.Arbitrary<T>; run: (s: BridgeSession, v: T) => Promise<PropertyVerdict>; runs?: number },
): Check {
  const citation = cite(spec.id, spec.rules, spec.context);
  return {
    ...propertyCheck<T>({
      id: spec.id,
      title: spec.title,
      suite: 'bridge',
      rules: citation.rules,
      level: citation.level,
      arbitrary: spec.arbitrary,
      predicate: async (value, ctx) => {
        const s = new BridgeSession(target, ctx.signal);
        try {
          return await spec.run(s, value);
        } catch (error) {
          if (error instanceof CheckFailure) return { ok: false, detail: error.message, evidence: s.evidence() };
          throw error;
        } finally {
          await s.close();
        }
      },
    }),
    ...citation,
    timeoutMs: 120_000,
  };
}

type Mutation = 'keep' | 'drop' | 'garbage' | 'repeat';
const PARAMS = ['client_id', 'redirect_uri', 'response_type', 'state', 'code_challenge', 'code_challenge_method', 'scope'] as const;
const mutation = fc.constantFrom<Mutation>('keep', 'keep', 'keep', 'drop', 'garbage', 'repeat');
const garbage = fc.oneof(fc.constant(''), fc.string({ maxLength: 40 }), fc.constantFrom('plain', 'token', 'https://attacker.example/cb', '%00', 'openid openid', 'S256 '));
const fuzzInput = fc.record({ muts: fc.tuple(...PARAMS.map(() => mutation)), junk: fc.tuple(...PARAMS.map(() => garbage)), extraScope: fc.stringMatching(/^[a-z:_-]{1,20}$/) });

export function propertyChecks(t: BridgeTarget): Check[] {
  return [
    bridgeProperty(t, {
      id: 'bridge/properties/authorize-fuzz',
      title: '/authorize fuzzing: never a redirect before the client and redirect are known; refusals after that redirect with error and iss; unknown scopes never stop a valid request',
      rules: ['ob.authorize.bad-client-no-redirect', 'ob.authorize.error-redirect', 'ob.authorize.unknown-scope'],
      arbitrary: fuzzInput,
      run: async (s, { muts, junk, extraScope }) => {
        const c = s.credentials('basic');
        const base: Record<string, string> = { ...s.params('basic', newPkce(), 'st-fuzz', 'n', `openid ${extraScope}`) };
        const u = new URL((await s.oidc()).discovery.authorization_endpoint);
        PARAMS.forEach((p, i) => {
          const m = muts[i]!;
          if (m === 'keep') u.searchParams.append(p, base[p]!);
          else if (m === 'garbage') u.searchParams.append(p, junk[i]!);
          else if (m === 'repeat') {
            u.searchParams.append(p, base[p]!);
            u.searchParams.append(p, base[p]!);
          }
        });
        u.searchParams.append('nonce', 'n');
        const user = await s.newUser();
        const res = await user.browser.http.get(u.href, { headers: { accept: 'text/html' } });
        const toClient = res.location !== undefined && new URL(res.location, s.target.issuer).origin === new URL(c.redirect_uri).origin;
        if (res.status >= 500) return { ok: false, detail: `the bridge answered ${said(res)}` };
        const changed = (p: (typeof PARAMS)[number]) => {
          const i = PARAMS.indexOf(p);
          return muts[i] !== 'keep' && !(muts[i] === 'garbage' && junk[i] === base[p]);
        };
        const clientBroken = changed('client_id') || changed('redirect_uri');
        if (clientBroken) {
          // A repeated identical client_id or redirect_uri still names the client: a bridge may refuse it either way.
          const stillKnown = (muts[0] === 'keep' || muts[0] === 'repeat') && (muts[1] === 'keep' || muts[1] === 'repeat');
          if (!stillKnown && toClient) return { ok: false, detail: `an invalid client or redirect was redirected: ${said(res)}` };
          return true;
        }
        // What the document requires to be refused: no or another response_type, no state, no
        // challenge, a method other than S256. Other changes (a different but well-formed state
        // or challenge, a repeated parameter) may go either way; they must only not break.
        const m = (p: (typeof PARAMS)[number]) => muts[PARAMS.indexOf(p)]!;
        const j = (p: (typeof PARAMS)[number]) => junk[PARAMS.indexOf(p)]!;
        const mustRefuse =
          m('response_type') === 'drop' ||
          (m('response_type') === 'garbage' && j('response_type') !== 'code') ||
          m('state') === 'drop' ||
          (m('state') === 'garbage' && j('state') === '') ||
          m('code_challenge') === 'drop' ||
          (m('code_challenge') === 'garbage' && j('code_challenge') === '') ||
          m('code_challenge_method') === 'drop' ||
          (m('code_challenge_method') === 'garbage' && j('code_challenge_method') !== 'S256');
        const eitherWay = !mustRefuse && (['response_type', 'state', 'code_challenge', 'code_challenge_method'] as const).some((p) => changed(p));
        if (eitherWay || muts.includes('repeat')) {
          if (!toClient) return true;
          const params = new URL(res.location!).searchParams;
          return params.get('error') === null || params.get('iss') === s.target.issuer ? true : { ok: false, detail: `an error redirect without iss: ${res.location}` };
        }
        if (mustRefuse) {
          if (!toClient) return res.status >= 400 && res.status < 500 ? true : { ok: false, detail: `a refused request went on: ${said(res)}` };
          const params = new URL(res.location!).searchParams;
          if (params.get('code') !== null) return { ok: false, detail: `a code for an invalid request: ${res.location}` };
          if (params.get('error') === null) return { ok: false, detail: `a redirect without error: ${res.location}` };
          if (params.get('iss') !== s.target.issuer) return { ok: false, detail: `an error redirect without iss: ${res.location}` };
          return true;
        }
        // Valid (the scope may be garbage: unknown values are ignored) -> the sign-in proceeds.
        if (toClient) {
          const params = new URL(res.location!).searchParams;
          return params.get('error') === null ? true : { ok: false, detail: `a valid request was refused: ${res.location}` };
        }
        return res.status >= 300 && res.status < 400 ? true : res.status === 200 ? true : { ok: false, detail: `a valid request did not proceed: ${said(res)}` };
      },
    }),
    bridgeProperty(t, {
      id: 'bridge/properties/transaction-model',
      title: 'the transaction table: random sequences of ID entry, approval, resume from the right or another browser, consent, denial and redemptions follow the model',
      rules: ['ob.transaction.identify', 'ob.transaction.callback', 'ob.transaction.resume-binding', 'ob.transaction.deny', 'ob.code.replay-revokes', 'ob.code.wrong-verifier'],
      context: ['ob.contract.transaction'],
      arbitrary: fc.commands(
        [
          fc.constant(new Identify()),
          fc.constant(new Approve()),
          fc.constant(new ResumeElsewhere()),
          fc.constantFrom(new Consent(true), new Consent(false)),
          fc.constantFrom(new Redeem(true), new Redeem(false)),
        ],
        { maxCommands: 8 },
      ),
      run: async (s, cmds) => {
        const real = await Real.start(s);
        await fc.asyncModelRun(() => ({ model: { state: 'identify', redeemed: 0 } as Model, real }), cmds);
        return true;
      },
    }),
  ];
}

// ---- the model-based property ----

interface Model {
  state: 'identify' | 'awaiting_signature' | 'authenticated' | 'consent' | 'code_issued' | 'access_denied' | 'failed';
  redeemed: number;
}

class Real {
  request?: string;
  resumeUri?: string;
  code?: string;
  accessToken?: string;
  private constructor(
    readonly s: BridgeSession,
    readonly user: User,
    readonly txUrl: string,
    readonly pkce: Pkce,
  ) {}

  static async start(s: BridgeSession): Promise<Real> {
    const user = await s.newUser();
    const pkce = newPkce();
    const res = await s.openAuthorize(user.browser, s.params('basic', pkce, 'st-model', 'n', `openid ${s.target.profile.ids.id_scope}`));
    if (!res.location) throw new CheckFailure(`/authorize: ${said(res)}`);
    return new Real(s, user, new URL(res.location, s.target.issuer).href.split('?')[0]!, pkce);
  }

  async state(): Promise<string> {
    return String((await this.s.view(this.user.browser, this.txUrl)).view.state);
  }
}

type Cmd = fc.AsyncCommand<Model, Real>;

async function expectState(r: Real, m: Model, when: string): Promise<void> {
  const actual = await r.state();
  // A cross-check of the model: the bridge's status view must show the model's state.
  if (actual !== m.state) throw new CheckFailure(`after ${when} the transaction is ${actual}, the model says ${m.state}`);
}

class Identify implements Cmd {
  check = (m: Readonly<Model>) => m.state === 'identify';
  async run(m: Model, r: Real) {
    const { res, view } = await r.s.post(r.user.browser, `${r.txUrl}/identify`, { id: r.user.key.identity });
    if (typeof view.request !== 'string') throw new CheckFailure(`entering the ID: ${said(res)}`);
    r.request = view.request;
    m.state = 'awaiting_signature';
    await expectState(r, m, 'entering the ID');
  }
  toString = () => 'identify';
}

class Approve implements Cmd {
  check = (m: Readonly<Model>) => m.state === 'awaiting_signature';
  async run(m: Model, r: Real) {
    const approved = await r.s.signer.approve(r.request!, { key: r.user.key, sameDevice: true });
    r.resumeUri = approved.resumeUri;
    m.state = 'authenticated';
    await expectState(r, m, 'the approval');
    const resumed = await r.s.signer.resume(r.user.browser, r.resumeUri!, r.s.target.issuer);
    if (resumed.status >= 400) throw new CheckFailure(`the resume link in the right browser: ${resumed.status}`);
    m.state = 'consent';
    await expectState(r, m, 'the resume');
  }
  toString = () => 'approve+resume';
}

class ResumeElsewhere implements Cmd {
  check = (m: Readonly<Model>) => m.state === 'awaiting_signature';
  async run(m: Model, r: Real) {
    const approved = await r.s.signer.approve(r.request!, { key: r.user.key, sameDevice: true });
    const other = (await r.s.newUser()).browser;
    const resumed = await r.s.signer.resume(other, approved.resumeUri!, r.s.target.issuer);
    if (resumed.status < 400 && r.s.authorizationResponse(resumed.location, r.s.credentials('basic').redirect_uri)) throw new CheckFailure('a resume link in another browser reached the client');
    m.state = 'failed';
    const actual = await r.state();
    // The document only requires that the transaction does not continue there.
    if (actual === 'consent' || actual === 'code_issued') throw new CheckFailure(`after a resume in another browser the transaction is ${actual}`);
    m.state = actual as Model['state'];
  }
  toString = () => 'resume-in-another-browser';
}

class Consent implements Cmd {
  constructor(readonly approve: boolean) {}
  check = (m: Readonly<Model>) => m.state === 'consent';
  async run(m: Model, r: Real) {
    const { view, res } = await r.s.post(r.user.browser, `${r.txUrl}/consent`, { decision: this.approve ? 'approve' : 'deny', claims: [] });
    const redirect = typeof view.redirect === 'string' ? view.redirect : res.location;
    const response = r.s.authorizationResponse(redirect, r.s.credentials('basic').redirect_uri);
    if (!response) throw new CheckFailure(`consent did not redirect to the client: ${said(res)}`);
    if (this.approve) {
      if (!response.code) throw new CheckFailure(`approval gave no code: ${response.location}`);
      r.code = response.code;
      m.state = 'code_issued';
    } else {
      if (response.error !== 'access_denied') throw new CheckFailure(`denial gave ${response.location}`);
      m.state = 'access_denied';
    }
  }
  toString = () => (this.approve ? 'consent-approve' : 'consent-deny');
}

class Redeem implements Cmd {
  constructor(readonly rightVerifier: boolean) {}
  check = (m: Readonly<Model>) => m.state === 'code_issued';
  async run(m: Model, r: Real) {
    const oidc = await r.s.oidc();
    const verifier = this.rightVerifier ? r.pkce.verifier : newPkce().verifier;
    const res = await oidc.token(r.s.credentials('basic'), r.s.style('basic'), r.code!, verifier);
    const expectOk = this.rightVerifier && m.redeemed === 0;
    if (expectOk !== (res.status === 200)) throw new CheckFailure(`redemption ${m.redeemed + 1} with the ${this.rightVerifier ? 'right' : 'wrong'} verifier: ${said(res)}`);
    if (res.status === 200) r.accessToken = String((res.json() as Record<string, unknown>).access_token);
    if (this.rightVerifier) {
      m.redeemed++;
      if (m.redeemed > 1 && r.accessToken) {
        const info = await oidc.userinfo(r.accessToken);
        if (info.status === 200) throw new CheckFailure('the access token of the first redemption survived a second redemption');
      }
    }
  }
  toString = () => (this.rightVerifier ? 'redeem' : 'redeem-wrong-verifier');
}
