// The relay's test mode (--test-pages, tests only): a page whose script creates a passkey and
// answers an assertion in a real browser (WebAuthn in headless Chromium with its virtual
// authenticator), so a test can enroll a browser-made credential and fetch the keystore with it.
// Nothing here is on the relay's API: a test drives the page through the browser.
import { asset, html } from '../shared/http.ts';

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>passkey test page</title>
<script src="/test/passkey.js"></script></head>
<body><p>WebAuthn test page of the reference relay (test mode).</p></body></html>`;

// Base64url in and out; the credential's SPKI key comes from getPublicKey() (WebAuthn level 2).
const SCRIPT = `'use strict';
const b64u = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
window.createPasskey = async (rpId) => {
  const cred = await navigator.credentials.create({ publicKey: {
    rp: { id: rpId, name: 'svc test' },
    user: { id: crypto.getRandomValues(new Uint8Array(16)), name: 'test', displayName: 'test' },
    challenge: crypto.getRandomValues(new Uint8Array(32)),
    pubKeyCredParams: [{ type: 'public-key', alg: -7 }, { type: 'public-key', alg: -8 }, { type: 'public-key', alg: -257 }],
    authenticatorSelection: { userVerification: 'required', residentKey: 'preferred' },
  } });
  return { credential_id: b64u(cred.rawId), credential_public_key: b64u(cred.response.getPublicKey()), credential_alg: cred.response.getPublicKeyAlgorithm() };
};
// form 'utf8' hands the browser TextEncoder's bytes of the issued string (as the deployed web app does).
window.assertPasskey = async (rpId, challenge, credentialId, userVerification, form) => {
  const a = await navigator.credentials.get({ publicKey: { rpId, challenge: form === 'utf8' ? new TextEncoder().encode(challenge) : bytes(challenge), allowCredentials: [{ type: 'public-key', id: bytes(credentialId) }], userVerification } });
  return { credential_id: b64u(a.rawId), client_data_json: b64u(a.response.clientDataJSON), authenticator_data: b64u(a.response.authenticatorData), signature: b64u(a.response.signature) };
};
`;

export const passkeyPage = (): Response => html(PAGE);
export const passkeyScript = (): Response => asset(SCRIPT, 'text/javascript; charset=utf-8');
