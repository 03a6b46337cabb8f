// Starting a transaction (ns.transaction.create): build the request whose audience is this RP's
// origin, keep the record (hashes of the binding cookie and poll secret, the match code, the
// initiator context) and hand back what the starting browser holds. Shared by the login page and
// the test start contract (POST /login, ns.start.contract).
import { limits } from '../../schemas/ts/limits.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { encodeObject } from '../../protocol/common/codec.ts';
import { byteLength } from '../../protocol/common/base64.ts';
import { normalizeScopes, supportedScopes } from '../../protocol/signin/scopes.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import { browserLabel } from './browser.ts';
import { url, type RpContext } from './config.ts';
import { hashSecret, newSecret } from '../shared/secrets.ts';
import { newMatchCode, newNonce, newReferenceCode, newRequestId } from './secrets.ts';

export interface StartOptions {
  action: string;
  scopes: string[];
  statement?: string;
}

export interface Started {
  requestId: string;
  request: Record<string, unknown>;
  encoded: string;
  requestUri: string;
  pollSecret: string;
  matchCode: string;
  bindingCookie: string;
  expiresAt: number;
}

const ACTIONS: ReadonlySet<string> = new Set(vocabulary.actions.values);
// "One line, no CR, LF or other control characters" (ns.request.statement), as the verifier reads it.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const START_FIELDS = new Set(['action', 'scopes', 'statement']);

export const defaultStartOptions = (ctx: RpContext): StartOptions => ({ action: 'signin', scopes: [], statement: `Sign in to ${ctx.config.name}` });

/** Validates a start body (ns.start.options); an option this RP cannot honour is a 400. */
export function parseStartOptions(ctx: RpContext, body: unknown): StartOptions {
  const unsupported = (detail: string) => ruleError(400, 'ns.start.options', detail);
  const options = defaultStartOptions(ctx);
  if (body === undefined) return options;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpError(400, 'missing_field', 'the start body must be a JSON object', 'ns.start.contract');
  }
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) if (!START_FIELDS.has(key)) throw unsupported(`start option ${JSON.stringify(key).slice(0, 80)} is not supported`);
  if (b.action !== undefined) {
    if (typeof b.action !== 'string' || !ACTIONS.has(b.action)) throw unsupported(`action must be one of ${[...ACTIONS].join(', ')}`);
    options.action = b.action;
  }
  if (b.scopes !== undefined) {
    if (!Array.isArray(b.scopes) || !b.scopes.every((s): s is string => typeof s === 'string')) throw unsupported('scopes must be an array of strings');
    const scopes = normalizeScopes(b.scopes);
    const foreign = scopes.find((s) => !supportedScopes.has(s));
    if (foreign !== undefined) throw unsupported(`scope ${JSON.stringify(foreign).slice(0, 80)} is not offered by this RP`);
    if (scopes.length > limits.scopes_max) throw unsupported(`at most ${limits.scopes_max} scopes`);
    options.scopes = scopes;
  }
  if (b.statement !== undefined) {
    if (typeof b.statement !== 'string') throw unsupported('statement must be a string');
    if (byteLength(b.statement) > limits.statement_max_bytes) throw unsupported(`statement is longer than ${limits.statement_max_bytes} bytes`);
    if (CONTROL.test(b.statement)) throw unsupported('statement must be one line without control characters');
    if (b.statement === '') delete options.statement;
    else options.statement = b.statement;
  }
  return options;
}

export async function startTransaction(ctx: RpContext, options: StartOptions, userAgent: string | null): Promise<Started> {
  const issued = Math.floor(ctx.now() / 1000) * 1000;
  const expiresAt = issued + ctx.config.requestWindowSeconds * 1000;
  const origin = ctx.config.origin;
  for (let attempt = 0; ; attempt++) {
    const requestId = newRequestId();
    const request: Record<string, unknown> = {
      [ctx.profile.ids.auth_field]: '1',
      request_id: requestId,
      domain: new URL(origin).host,
      audience: origin,
      nonce: newNonce(),
      issued_at: formatRfc3339(issued),
      expires_at: formatRfc3339(expiresAt),
      action: options.action,
      response_uri: url(ctx, ctx.paths.response),
    };
    if (options.statement !== undefined) request.statement = options.statement;
    if (options.scopes.length > 0) request.scopes = options.scopes;
    const encoded = encodeObject(request);
    const refCode = newReferenceCode();
    const pollSecret = newSecret();
    const bindingCookie = newSecret();
    const matchCode = newMatchCode();
    const inserted = await ctx.transactions.insert({
      requestId,
      request,
      encoded,
      refCode,
      bindingHash: hashSecret(bindingCookie),
      pollHash: hashSecret(pollSecret),
      matchCode,
      startedAt: ctx.now(),
      expiresAt,
      browser: browserLabel(userAgent),
    });
    // Only a reference-code collision (1 in 2^40 per live code) can make this retry.
    if (!inserted) {
      if (attempt < 5) continue;
      throw new Error('could not allocate a unique reference code');
    }
    return { requestId, request, encoded, requestUri: url(ctx, ctx.paths.reference + refCode), pollSecret, matchCode, bindingCookie, expiresAt };
  }
}
