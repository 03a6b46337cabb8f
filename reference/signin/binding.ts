// The request binding of document 1's reference RPs (ns.delivery.request-binding): the fields a
// response copies from its request, compared as one string. Shared by the reference RP and the bridge.

/**
 * The fields a response copies from its request (ns.delivery.request-binding), and their stored
 * form: each value as JSON, '' when absent, one per line (JSON text has no raw newline), so a
 * delivery compares one string instead of parsing the request per row.
 */
export const COPIED = ['request_id', 'audience', 'nonce', 'issued_at', 'expires_at', 'action', 'statement', 'scopes'] as const;

export function bindingOf(obj: Readonly<Record<string, unknown>>): string {
  let out = '';
  for (let i = 0; i < COPIED.length; i++) {
    const v = obj[COPIED[i]!];
    if (i > 0) out += '\n';
    if (v !== undefined) out += JSON.stringify(v);
  }
  return out;
}
