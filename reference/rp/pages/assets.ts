// The page script and stylesheet, served from this origin (the CSP forbids inline code).
export const SCRIPT = `'use strict';
(function () {
  var root = document.getElementById('login');
  if (!root) return;
  var status = document.getElementById('status');
  var pollUri = root.getAttribute('data-poll-uri');
  var secret = root.getAttribute('data-poll-secret');
  var home = root.getAttribute('data-home');
  var responseUri = root.getAttribute('data-response-uri');
  var messages = {
    pending: 'Waiting for your approval\\u2026',
    approved: 'Approved. Continue in the signer\\u2026',
    completed: 'Signed in.',
    ended: 'This sign-in has ended. Reload the page to start again.',
    expired: 'This sign-in has expired. Reload the page to start again.'
  };
  function show(state, text) {
    status.setAttribute('data-status', state);
    status.textContent = text || messages[state] || state;
  }
  var stopped = false;
  function poll() {
    if (stopped) return;
    fetch(pollUri, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ poll_secret: secret })
    }).then(function (r) {
      return r.json().then(function (body) { return { ok: r.ok, body: body }; });
    }).then(function (res) {
      if (!res.ok) { stopped = true; show('ended', res.body && res.body.detail); return; }
      var s = res.body.status;
      show(s);
      if (s === 'completed') { stopped = true; window.location.assign(home); return; }
      if (s === 'ended' || s === 'expired') { stopped = true; return; }
      setTimeout(poll, 1000);
    }).catch(function () { setTimeout(poll, 1000); });
  }
  setTimeout(poll, 1000);

  var form = document.getElementById('paste-form');
  var error = document.getElementById('paste-error');
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    error.textContent = '';
    var text = document.getElementById('paste-response').value.trim();
    fetch(responseUri, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ response: text })
    }).then(function (r) {
      return r.json().then(function (body) { return { ok: r.ok, body: body }; });
    }).then(function (res) {
      if (!res.ok) { error.textContent = (res.body && res.body.detail) || 'The response was refused.'; return; }
      var next = res.body.resume_uri;
      if (next && new URL(next, window.location.href).origin === window.location.origin) window.location.assign(next);
    }).catch(function () { error.textContent = 'The response could not be sent.'; });
  });
})();
`;

export const STYLE = `:root { font-family: system-ui, sans-serif; color: #1b1b1b; background: #fafafa; }
body { margin: 0; }
header { padding: .75rem 1.5rem; background: #1b1b1b; }
header .brand { color: #fff; text-decoration: none; font-weight: 600; }
main { max-width: 44rem; margin: 0 auto; padding: 1.5rem; }
section { background: #fff; border: 1px solid #ddd; border-radius: .5rem; padding: 1rem 1.25rem; margin: 1rem 0; }
.qr svg { width: 14rem; height: 14rem; }
.match strong { font-size: 2.5rem; letter-spacing: .2rem; font-variant-numeric: tabular-nums; }
.button { display: inline-block; padding: .5rem .9rem; margin: .25rem .25rem .25rem 0; border-radius: .35rem; background: #2450a6; color: #fff; text-decoration: none; }
textarea { width: 100%; font-family: ui-monospace, monospace; font-size: .8rem; }
.muted { color: #666; font-size: .9rem; }
#status { font-weight: 600; }
#paste-error { color: #a11; }
`;
