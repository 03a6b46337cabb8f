// The harness's OIDC client: discovery, authorization URLs, PKCE, and raw /token, /userinfo,
// /revoke and /introspect requests in every client-authentication form. It writes each request
// itself (over harness/actors/http.ts) so a check can send a bad one as easily as a good one,
// and validates ID tokens with jose against the issuer's published key set.
import { randomBytes, createHash, randomUUID } from 'node:crypto';
import { createLocalJWKSet, importJWK, jwtVerify, SignJWT, type JWK, type JWTPayload, type JSONWebKeySet } from 'jose';
import { HttpClient, type HttpResponse } from '../http.ts';

export interface ClientCredentials {
  client_id: string;
  client_secret?: string;
  private_jwk?: Record<string, unknown>;
  redirect_uri: string;
}

export type AuthStyle = 'basic' | 'post' | 'jwt' | 'none';

export interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  revocation_endpoint?: string;
  introspection_endpoint?: string;
  [k: string]: unknown;
}

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function newPkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The authentication style a client's credentials imply. */
export function styleOf(c: ClientCredentials, preferPost = false): AuthStyle {
  if (c.private_jwk) return 'jwt';
  if (c.client_secret !== undefined) return preferPost ? 'post' : 'basic';
  return 'none';
}

/** RFC 6749 section 2.3.1: Basic credentials are form-urlencoded first. */
const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');

/** The token68 of `c`'s Basic credentials (RFC 6749 section 2.3.1). */
export const basicCredentials = (c: ClientCredentials): string => Buffer.from(`${formEncode(c.client_id)}:${formEncode(c.client_secret ?? '')}`).toString('base64');

/** Parts of a private_key_jwt assertion a check swaps (OpenID Connect Core 1.0 section 9). */
export interface AssertionEdit {
  iss?: string;
  sub?: string;
  aud?: string;
  /** Seconds from now (negative: already past). */
  expIn?: number;
  /** Another private key, signed under the client's own kid. */
  key?: CryptoKey;
  /** A public key placed in the header as `jwk` (a verifier must never trust it). */
  jwk?: JWK;
  /** Claims left out (all three are REQUIRED). */
  omit?: ReadonlyArray<'jti' | 'exp' | 'sub'>;
}

/** A private_key_jwt client assertion for `c`: iss and sub its id, aud `audience`, a fresh jti, expiring in 60 s. */
export async function clientAssertion(c: ClientCredentials, audience: string, edit: AssertionEdit = {}): Promise<string> {
  const jwk = c.private_jwk as JWK;
  const alg = typeof jwk.alg === 'string' ? jwk.alg : 'RS256';
  const now = Math.floor(Date.now() / 1000);
  const expIn = edit.expIn ?? 60;
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg, ...(typeof jwk.kid === 'string' ? { kid: jwk.kid } : {}), ...(edit.jwk ? { jwk: edit.jwk } : {}) })
    .setIssuer(edit.iss ?? c.client_id)
    .setAudience(edit.aud ?? audience)
    .setIssuedAt(Math.min(now, now + expIn - 60));
  if (!edit.omit?.includes('sub')) jwt.setSubject(edit.sub ?? c.client_id);
  if (!edit.omit?.includes('jti')) jwt.setJti(randomUUID());
  if (!edit.omit?.includes('exp')) jwt.setExpirationTime(now + expIn);
  return jwt.sign(edit.key ?? (await importJWK(jwk, alg)));
}

/** The form fields that present `assertion` for `c`. */
export const assertionForm = (c: ClientCredentials, assertion: string): Record<string, string> => ({
  client_id: c.client_id,
  client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
  client_assertion: assertion,
});

export class OidcClient {
  constructor(
    readonly http: HttpClient,
    readonly discovery: Discovery,
  ) {}

  static async discover(http: HttpClient, issuer: string, path = '/.well-known/openid-configuration'): Promise<{ res: HttpResponse; discovery?: Discovery }> {
    const res = await http.get(`${issuer}${path}`, { headers: { accept: 'application/json' }, noCookies: true });
    let discovery: Discovery | undefined;
    try {
      const body = res.json() as Discovery;
      if (res.status === 200 && typeof body.authorization_endpoint === 'string' && typeof body.token_endpoint === 'string') discovery = body;
    } catch {
      discovery = undefined;
    }
    return { res, discovery };
  }

  /** An authorization URL with these parameters (undefined values are left out, so a check can omit one). */
  authorizeUrl(params: Record<string, string | undefined>): string {
    const u = new URL(this.discovery.authorization_endpoint);
    for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.append(k, v);
    return u.href;
  }

  /** The client-authentication part of a request: headers and form fields. */
  async authenticate(c: ClientCredentials, style: AuthStyle, audience: string): Promise<{ headers: Record<string, string>; form: Record<string, string> }> {
    switch (style) {
      case 'basic':
        return { headers: { authorization: `Basic ${basicCredentials(c)}` }, form: {} };
      case 'post':
        return { headers: {}, form: { client_id: c.client_id, client_secret: c.client_secret ?? '' } };
      case 'jwt':
        return { headers: {}, form: assertionForm(c, await clientAssertion(c, audience)) };
      case 'none':
        return { headers: {}, form: { client_id: c.client_id } };
    }
  }

  /** POST a form to an endpoint with the client's authentication. */
  async postForm(url: string, c: ClientCredentials | undefined, style: AuthStyle, fields: Record<string, string | undefined>): Promise<HttpResponse> {
    const auth = c ? await this.authenticate(c, style, this.discovery.token_endpoint) : { headers: {}, form: {} };
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...fields, ...auth.form })) if (v !== undefined) form.set(k, v);
    return this.http.post(url, form.toString(), { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...auth.headers }, noCookies: true });
  }

  token(c: ClientCredentials, style: AuthStyle, code: string, verifier: string | undefined, redirectUri = c.redirect_uri): Promise<HttpResponse> {
    return this.postForm(this.discovery.token_endpoint, c, style, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier });
  }

  userinfo(accessToken: string): Promise<HttpResponse> {
    return this.http.get(this.discovery.userinfo_endpoint ?? `${this.discovery.issuer}/userinfo`, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' }, noCookies: true });
  }

  revoke(c: ClientCredentials | undefined, style: AuthStyle, token: string): Promise<HttpResponse> {
    return this.postForm(this.discovery.revocation_endpoint ?? `${this.discovery.issuer}/revoke`, c, style, { token, token_type_hint: 'access_token' });
  }

  introspect(c: ClientCredentials, style: AuthStyle, token: string): Promise<HttpResponse> {
    return this.postForm(this.discovery.introspection_endpoint ?? `${this.discovery.issuer}/introspect`, c, style, { token });
  }

  async jwks(): Promise<{ res: HttpResponse; jwks?: JSONWebKeySet }> {
    const res = await this.http.get(this.discovery.jwks_uri, { headers: { accept: 'application/json' }, noCookies: true });
    try {
      const body = res.json() as JSONWebKeySet;
      return { res, ...(Array.isArray(body.keys) ? { jwks: body } : {}) };
    } catch {
      return { res };
    }
  }

  /** Verifies an ID token against the key set now published (RS256 only); throws with the reason. */
  async verifyIdToken(idToken: string, clientId: string): Promise<{ payload: JWTPayload; kid?: string }> {
    const { jwks } = await this.jwks();
    if (!jwks) throw new Error('the issuer publishes no key set');
    const { payload, protectedHeader } = await jwtVerify(idToken, createLocalJWKSet(jwks), { issuer: this.discovery.issuer, audience: clientId, algorithms: ['RS256'] });
    return { payload, ...(protectedHeader.kid !== undefined ? { kid: protectedHeader.kid } : {}) };
  }
}
