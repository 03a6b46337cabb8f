// A registration's envelope broken on the wire (wire.ts) as an implementer ships it (issue 25:
// "Each bound part swapped, one at a time, for another valid one").
import { verifyDocument } from '../../protocol/common/document.ts';
import { jsonAnswer, type Next, type Wire, type WireVariant } from './kit.ts';

type Obj = Record<string, unknown>;

/**
 * The signed identity_document taken as the registration's proof: a registration the relay
 * refuses 401 is accepted when its document verifies by its own key and names the body's identity
 * and key, whatever its identity_signature signs or whoever signed it.
 */
const documentAsProof: Wire = async (req: Request, next: Next) => {
  if (req.method !== 'POST' || new URL(req.url).pathname !== '/identities') return next(req);
  const body = (await req
    .clone()
    .json()
    .catch(() => ({}))) as Obj;
  const res = await next(req);
  const doc = body.identity_document as Obj | undefined;
  if (res.status !== 401 || !doc || typeof doc !== 'object' || !verifyDocument(doc).ok || doc.identity !== body.identity || doc.public_key !== body.public_key) return res;
  const { identity, public_key, encryption_public_key } = body;
  return jsonAnswer({ identity, public_key, encryption_public_key, relay: doc.relay, created_at: new Date().toISOString() }, 201);
};

export const RELAY_REGISTER_WIRE: Record<string, WireVariant> = {
  // "always with an identity-signed envelope so a DNS-token holder cannot register a key it does not control"
  'register-document-as-proof': {
    rule: 'ra.identities.signature',
    what: 'a registration whose identity_signature fails is accepted when its identity_document verifies',
    wire: documentAsProof,
  },
};
