// The TLS trust of a client that also trusts a test authority's CA: the system's roots plus the
// extra PEM, as one secure context made once per set of certificates. Handing tls.connect a `ca`
// list instead makes a context per connection, parsing every root certificate again: about 19 ms
// of the event loop per new connection (measured on the relay's resolutions, docs/performance.md).
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';

const contexts = new Map<string, SecureContext>();

/** undici `connect` options trusting the system's roots and `extra` (PEM); {} without extra. */
export function trusting(extra: string | readonly string[] | undefined): { secureContext?: SecureContext } {
  const pems = extra === undefined ? [] : typeof extra === 'string' ? [extra] : [...extra];
  if (pems.length === 0) return {};
  const key = pems.join('\n');
  let context = contexts.get(key);
  if (!context) {
    context = createSecureContext({ ca: [...rootCertificates, ...pems] });
    contexts.set(key, context);
  }
  return { secureContext: context };
}
