// The operations of an OpenAPI file of spec/http/: method, path template, parameters, whether it
// is authenticated (its `security`), its body's content types, and the statuses it lists. The
// fuzzer draws from these, so a route added to the file is fuzzed without a line of code here.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export interface Operation {
  id: string;
  method: string;
  /** The template, e.g. `/messages/{identity}`. */
  path: string;
  pathParams: string[];
  query: string[];
  /** A challenge or a signed request opens it (security lists a scheme). */
  authenticated: boolean;
  /** Content types of its body; empty when it takes none. */
  bodyTypes: string[];
  /** Statuses the file lists for it (numbers; `default` is dropped). */
  statuses: number[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Follows a local `#/components/...` reference; other values pass through. */
function deref(doc: Obj, v: unknown): unknown {
  if (!isObj(v) || typeof v.$ref !== 'string' || !v.$ref.startsWith('#/')) return v;
  return v.$ref
    .slice(2)
    .split('/')
    .reduce<unknown>((at, key) => (isObj(at) ? at[key] : undefined), doc);
}

export function loadOperations(file: URL): Operation[] {
  const doc = parse(readFileSync(file, 'utf8')) as Obj;
  const out: Operation[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Obj)) {
    if (!isObj(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of ['get', 'post', 'put', 'delete', 'patch']) {
      const op = item[method];
      if (!isObj(op)) continue;
      const params = [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])].map((p) => deref(doc, p)).filter(isObj);
      const body = deref(doc, op.requestBody);
      const security = Array.isArray(op.security) ? op.security : Array.isArray(doc.security) ? doc.security : [];
      out.push({
        id: typeof op.operationId === 'string' ? op.operationId : `${method} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => String(p.name)),
        query: params.filter((p) => p.in === 'query').map((p) => String(p.name)),
        authenticated: security.some((s) => isObj(s) && Object.keys(s).length > 0),
        bodyTypes: isObj(body) && isObj(body.content) ? Object.keys(body.content) : [],
        statuses: Object.keys(isObj(op.responses) ? op.responses : {})
          .filter((s) => /^\d{3}$/.test(s))
          .map(Number),
      });
    }
  }
  return out;
}

/** spec/http/<name>.openapi.yaml */
export function specFile(name: 'rp' | 'bridge' | 'relay'): URL {
  return new URL(`../../spec/http/${name}.openapi.yaml`, import.meta.url);
}
