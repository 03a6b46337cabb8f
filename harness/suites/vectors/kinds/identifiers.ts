// Identifier vectors: ID input (id-input.json), service names (names.json), audience
// normalization (audience.json) and request-by-reference forms (signin-reference.json).
import type { Check } from '../../../run/model.ts';
import { ruleIds, vectorCheck, listOf, nameOf, type KindContext } from '../check.ts';

export function idInputChecks(kc: KindContext): Check[] {
  return listOf(kc.file).map((v, i) =>
    vectorCheck(
      kc,
      nameOf(v, i),
      [
        'ob.id-input.order',
        'ob.id-input.trim',
        'ob.id-input.url',
        'ob.id-input.lowercase',
        'ob.id-input.valid-name',
        'ob.id-input.no-alias',
        'ob.id-input.projections',
        ...ruleIds(v.rules),
      ],
      (expect) => {
        const r = kc.core.normalizeIdInput(String(v.input), { allowHttp: v.allow_http === true });
        expect.equal('valid', r.ok, v.valid);
        if (r.ok && v.valid) {
          expect.equal('id', r.id, v.id).equal('profile_url', r.profileUrl, v.profile_url).equal('did', r.did, v.did);
        }
      },
    ),
  );
}

export function namesChecks(kc: KindContext): Check[] {
  const { core, profile } = kc;
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i, 'identity'), ['ra.names.valid', 'ra.names.reserved', 'ra.names.hosted', 'ra.names.dir-name', 'ns.verify.1', ...ruleIds(v.rules)], (expect) => {
      expect.equal('valid', core.validServiceName(v.identity) !== undefined, v.valid);
      expect.equal('claimable', core.claimable(v.identity, profile), v.claimable);
      expect.equal('hosted_valid', core.hostedReason(v.identity, profile) === 'available', v.hosted_valid);
      if ('dir_name' in v) expect.equal('dir_name', core.dirName(v.identity), v.dir_name);
    }),
  );
}

export function audienceChecks(kc: KindContext): Check[] {
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i), ['ns.request.audience', 'ns.verify.2', ...ruleIds(v.rules)], (expect) => {
      expect.equal('normalized origin', kc.core.normalizeOrigin(v.input) ?? null, v.origin ?? null);
    }),
  );
}

export function referenceChecks(kc: KindContext): Check[] {
  const file = kc.file as { forms?: Record<string, unknown>[]; origins?: Record<string, unknown>[] };
  const forms = (file.forms ?? []).map((v, i) =>
    vectorCheck(kc, `form:${nameOf(v, i)}`, ['ns.reference.forms', 'ns.transport.deeplink', 'ns.transport.web-handoff', ...ruleIds(v.rules)], (expect) => {
      const uri = kc.core.referenceFromInput(kc.profile, String(v.input));
      expect.equal('is a reference', uri !== undefined, v.ok);
      if (v.ok) expect.equal('reference link', uri, v.uri);
    }),
  );
  const origins = (file.origins ?? []).map((v, i) =>
    vectorCheck(kc, `origin:${nameOf(v, i, 'uri')}`, ['ns.reference.same-origin', 'ns.request.audience', ...ruleIds(v.rules)], (expect) => {
      expect.equal('same origin as the audience', kc.core.sameOrigin(String(v.audience), String(v.uri)), v.ok);
    }),
  );
  return [...forms, ...origins];
}
