// The commented example targets file that `svc-conformance init` writes. It is parsed in the
// tests against the schema, so it cannot drift from it.
import { DEFAULT_SERVICE_NAME } from '../../protocol/common/profile.ts';

export function exampleTargets(): string {
  return `// svc-conformance targets file: the implementation under test.
// Run it with:  svc-conformance run --targets ${'targets.json'}
// Schema: spec/harness/targets.schema.json (bundled: schemas/json/harness/targets.schema.json).
// Flags given on the command line override what this file says.
{
  // The profile name your implementation was built for (svc, poweur, ...).
  "service_name": "${DEFAULT_SERVICE_NAME}",

  // Admin URL of the test identity authority your implementation resolves identities through.
  // Start one as root with \`svc-conformance authority --dir .authority\`, send your resolver's DNS
  // queries to 127.0.88.1:53 and trust .authority/ca.pem for HTTPS.
  "authority": "http://127.0.88.1:8055",

  // A relying party of document 1 (the rp suite).
  "rp": {
    // Its origin: the audience of its requests; the metadata is read from here.
    "origin": "https://rp.example.test",
    // The start contract (spec/http/rp.openapi.yaml, ns.start.contract): POST with
    // Accept: application/json starts a login as your login page does.
    "start_url": "https://rp.example.test/test/start",
    // The page a browser opens to sign in (default: start_url; page checks skip without one).
    "login_page_url": "https://rp.example.test/login",
    // Further processes of the same RP (same origin, shared stores): the replay race crosses them.
    "processes": [],
    // An instance whose nonce store is down, at the same start path: enables the fail-closed check.
    // "broken_store_origin": "https://rp-broken.example.test",
    // An instance whose requests live a few seconds: the expiry checks wait out its window, not 5 minutes.
    // "short_window_origin": "https://rp-short.example.test",
    // Limits the documents leave open, as your RP sets them.
    "declared": { "resume_code_lifetime_s": 60 },
    // Project decisions (statuses, codes, envelope fields) are reported apart; true makes them gate.
    "profile": false,
    "request_timeout_s": 20,
    // Known failures: check id -> reason. A listed check that passes fails the run (stale).
    "expected_failures": {}
  }
  // An OpenID Connect bridge of document 2 (the bridge suite): add a comma above and uncomment.
  // Register the harness's clients at your bridge first (ob.contract.clients, docs/suites/bridge.md).
  // "bridge": {
  //   "issuer": "https://sso.example.test",
  //   "clients": {
  //     "basic": { "client_id": "harness-basic", "client_secret": "...", "redirect_uri": "https://app.example.test/cb" },
  //     "public": { "client_id": "harness-public", "redirect_uri": "http://127.0.0.1/cb" },
  //     "other_sector": { "client_id": "harness-other", "client_secret": "...", "redirect_uri": "https://other.example.test/cb" }
  //   },
  //   // Operator hook that rotates the signing key when POSTed (enables the rotation check).
  //   "rotate_url": "https://sso.example.test/operator/keys/rotate",
  //   "rotate_token": "...",
  //   // Operator hook that suspends clients.suspendable when POSTed with client_id (enables the suspension check).
  //   "suspend_url": "https://sso.example.test/operator/clients/suspend",
  //   "suspend_token": "...",
  //   "profile": false
  // }
  // A relay of document 3 (the relay suite): add a comma above and uncomment. Test identities are
  // published in the authority with documents naming your relay, and registered at it when its
  // banner lists hosted_domains.
  // "relay": {
  //   "url": "https://relay.example.test",
  //   // A second relay resolving through the same authority: enables the federation checks.
  //   "peer_url": "https://relay-2.example.test",
  //   // Its configuration, where the suite must know it (the spool expiry check needs a TTL <= 30 s).
  //   "declared": { "spool_ttl_s": 10, "max_streams": 8, "sender_limit": 120, "availability_limit": 120, "invite_code": "..." },
  //   "profile": false
  // }
}
`;
}
