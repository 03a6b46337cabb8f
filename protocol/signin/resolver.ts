// What the verifier needs from resolution (rule 6): the identity's current key and its previous
// keys. Resolving over HTTPS and DNS is I/O and lives with the servers and the harness; this is
// the injected interface and an in-memory implementation.
import type { PreviousKey } from '../common/document.ts';

export interface ResolvedIdentity {
  identity: string;
  publicKey: Uint8Array;
  previousKeys: readonly PreviousKey[];
  source: string;
  /** The verified identity document, when it was fetched (a relay reads its `relay` and encryption key). */
  document?: Readonly<Record<string, unknown>>;
}

export class ResolutionError extends Error {
  constructor(
    readonly code: 'not_found' | 'key_mismatch' | 'invalid_document' | 'unreachable',
    message: string,
  ) {
    super(message);
  }
}

export interface Resolver {
  resolve(identity: string): Promise<ResolvedIdentity>;
}

export class StaticResolver implements Resolver {
  readonly #identities = new Map<string, ResolvedIdentity>();

  set(identity: string, publicKey: Uint8Array, previousKeys: readonly PreviousKey[] = []): this {
    this.#identities.set(identity, { identity, publicKey, previousKeys, source: 'static' });
    return this;
  }

  async resolve(identity: string): Promise<ResolvedIdentity> {
    const found = this.#identities.get(identity);
    if (!found) throw new ResolutionError('not_found', `${identity} is not known`);
    return found;
  }
}
