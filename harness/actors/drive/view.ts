// A node as a relay answers it (GET .../nodes/:node, each of /children). Document 3 shows no body,
// and two forms are in use: the project's {node, version, seq, manifest, ...} with the signed head
// manifest inline, and the deployed client's {id, head, generation, kind, folder, ...} without it,
// whose manifest is read from GET .../versions/:head. A client reads either.
type Obj = Record<string, unknown>;

export interface NodeView {
  node: string;
  /** The head version's id. */
  version: string;
  /** The head manifest when the answer carries it inline. */
  manifest?: Obj;
  removed: boolean;
}

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The node a view names, in either form; undefined when it names no node or head. */
export function readNodeView(v: unknown): NodeView | undefined {
  if (!isObj(v)) return undefined;
  const node = typeof v.id === 'string' ? v.id : v.node;
  const version = typeof v.head === 'string' ? v.head : v.version;
  if (typeof node !== 'string' || typeof version !== 'string') return undefined;
  return { node, version, ...(isObj(v.manifest) ? { manifest: v.manifest } : {}), removed: v.removed === true };
}
