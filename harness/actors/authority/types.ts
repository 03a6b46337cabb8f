// The test identity authority's control surface, shared by the in-process authority
// (startAuthority) and the admin-API client (AuthorityClient), so suites and the CLI drive either
// the same way. Keys are bytes in process, and text over the admin API: a seed is base64url of
// 32 bytes; a public key is `ed25519:<b64url>` (any base64 accepted).

/** Bytes, or their text form (seed: base64url; public key: `ed25519:<b64url>`; enc key: `x25519:<b64url>`). */
export type KeyInput = Uint8Array | string;

export interface PublishSpec {
  identity: string;
  /** The current signing key's seed; needed to serve the signed document over HTTPS. */
  seed?: KeyInput;
  /** The current signing key when no seed is given (then only DNS can be served). */
  publicKey?: KeyInput;
  encryptionPublicKey?: KeyInput;
  previousKeys?: readonly { publicKey: KeyInput; validUntil: string }[];
  /** Serve the TXT records (default true). */
  dns?: boolean;
  /** Serve the identity document (default true when a seed is given). */
  https?: boolean;
  /** The document's `relay` (default: the identity itself). */
  relay?: string;
  /** The document response's Cache-Control (default `no-store`). */
  cacheControl?: string;
  /** A public profile document, served verbatim at the profile path (profile_document_path). */
  profile?: Record<string, unknown>;
  /** A capabilities document, served verbatim at the capabilities path (capabilities_path; document 3). */
  capabilities?: Record<string, unknown>;
}

export interface FaultSpec {
  /** DNS answers this key instead (so DNS and HTTPS disagree); `true` for a fresh random key. */
  dnsKey?: KeyInput | true;
  /** Answer late, in ms. */
  delayMs?: { dns?: number; https?: number };
  /** Never answer (the query or request hangs until the client gives up). */
  timeout?: 'dns' | 'https' | 'both';
  /** Answer the document request with this status and a JSON error body. */
  httpsStatus?: number;
  /** Answer the document request with a 302 to this URL (`true`: the same path on the authority's address). */
  redirect?: string | true;
  /** Serve a document padded to this many bytes (`true`: 262144), beyond any sane body cap. */
  oversize?: number | true;
  /** Serve the document with a signature that does not verify. */
  badSignature?: boolean;
}

/**
 * A file the authority serves over HTTPS at any URL under a host of its own (a URL client's
 * metadata document, a client's key set): its body or answer, and where its host resolves.
 */
export interface FileSpec {
  /** `https://<host>[:<httpsPort>]/<path>` (or `http://<host>[:<httpPort>]/...`); the host is answered by the authority's DNS. */
  url: string;
  /** A JSON value (served as application/json) or text. */
  body?: unknown;
  /** Default 200. */
  status?: number;
  /** Extra response headers (`cache-control` defaults to `no-store`). */
  headers?: Record<string, string>;
  /** Answer a 302 to this URL instead of the body. */
  redirect?: string;
  /** Answer this many ms late. */
  delayMs?: number;
  /** Pad a JSON object body (a `padding` member) to exactly this many bytes. */
  padTo?: number;
  /** Resolve the host to `otherAddress`, a loopback address no fetcher is told to exempt. */
  otherAddress?: boolean;
}

/** A served file and how many times it was fetched (GET or HEAD). */
export interface HostedFile {
  url: string;
  fetches: number;
  bytes: number;
}

/** What the authority publishes for one identity (text forms). */
export interface IdentityInfo {
  identity: string;
  public_key: string;
  encryption_public_key?: string;
  previous_keys: { public_key: string; valid_until: string }[];
  dns: boolean;
  https: boolean;
  faults: Record<string, unknown>;
  /** The document as served (absent when HTTPS is off or no seed is known). */
  document?: Record<string, unknown>;
}

export interface AuthorityInfo {
  name: string;
  address: string;
  /** A second loopback address serving the same HTTPS host (files published with otherAddress). */
  otherAddress: string;
  dnsServer: string;
  httpsPort: number;
  /** Plain HTTP port serving the same files (never identity documents). */
  httpPort: number;
  adminUrl: string;
  caFile: string;
  caPem: string;
  ttl: number;
  zone: string;
  identities: string[];
}

export interface NewIdentityOptions {
  /** The parent zone (default `id.test`). */
  zone?: string;
  /** A chosen label instead of a random one. */
  label?: string;
  /** Also publish an X25519 encryption key. */
  encryption?: boolean;
  dns?: boolean;
  https?: boolean;
  /** A public profile document to serve. */
  profile?: Record<string, unknown>;
}

export interface RotateOptions {
  graceSeconds?: number;
  /** The old key's `valid_until` exactly (RFC 3339); wins over graceSeconds. */
  validUntil?: string;
}

/** The operations both the in-process authority and AuthorityClient offer. */
export interface AuthorityControl {
  info(): Promise<AuthorityInfo>;
  publish(spec: PublishSpec): Promise<IdentityInfo>;
  /**
   * New current key; the old one goes to previous_keys valid until `validUntil` (RFC 3339, for a
   * grace window ending at a precise instant) or else now + graceSeconds (default 0).
   */
  rotate(identity: string, newSeedOrKey: KeyInput, options?: RotateOptions): Promise<IdentityInfo>;
  drop(identity: string, what: 'dns' | 'https' | 'both'): Promise<IdentityInfo>;
  fault(identity: string, fault: FaultSpec): Promise<IdentityInfo>;
  clearFaults(identity: string): Promise<IdentityInfo>;
  /** A random identity under the test zone, published at once (DNS and HTTPS). */
  newIdentity(options?: NewIdentityOptions): Promise<{ identity: string; seed: Uint8Array<ArrayBuffer>; publicKey: string }>;
  identity(identity: string): Promise<IdentityInfo | undefined>;
  /** Serves a file at an HTTPS URL of the authority (replacing any file at that URL, fetch count kept). */
  serveFile(spec: FileSpec): Promise<HostedFile>;
  /** The file at `url` and its fetch count; undefined when none is served there. */
  file(url: string): Promise<HostedFile | undefined>;
}

export class AuthorityError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'AuthorityError';
  }
}
