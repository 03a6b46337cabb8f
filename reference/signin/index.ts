// The native sign-in pieces every reference server that is an RP of document 1 uses (the
// reference RP and the bridge): reading a delivery body, refusing approvals in URLs, the status of
// a verifier rejection (delivery.ts), the request binding (binding.ts), the codes a transaction
// hands out (codes.ts) and the coarse browser label of the context record (browser.ts).
export { parseDelivery, refuseApprovalInUrl, rejectionError, type DeliveryBody } from './delivery.ts';
export { bindingOf, COPIED } from './binding.ts';
export { newMatchCode, newNonce, newReferenceCode, newRequestId } from './codes.ts';
export { browserLabel } from './browser.ts';
