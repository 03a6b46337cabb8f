// The `bridge` suite: checks any OpenID Connect bridge of document 2 over the network. The
// harness is the OIDC client (harness/actors/oidc/) and the user's signer (harness/actors/signer/),
// drives the transaction through the project's test contract (ob.contract.transaction) with the
// clients the target declares (ob.contract.clients), and learns every URL from discovery.
import type { Check, SuiteLoad } from '../../run/model.ts';
import { ConfigError } from '../../run/exit.ts';
import { HttpClient, HttpError, viaAuthority } from '../../actors/http.ts';
import type { BridgeTarget } from './driver.ts';
import { surfaceChecks } from './checks/surface.ts';
import { authorizeChecks } from './checks/authorize.ts';
import { accountChecks } from './checks/account.ts';
import { consoleChecks } from './checks/console.ts';
import { tokenChecks } from './checks/tokens.ts';
import { tokenFormChecks } from './checks/token-forms.ts';
import { authorizeFormChecks } from './checks/authorize-forms.ts';
import { promptConsentChecks } from './checks/prompt-consent.ts';
import { transactionViewChecks } from './checks/transaction-view.ts';
import { signerLinkChecks } from './checks/signer-links.ts';
import { loginHintChecks } from './checks/login-hint.ts';
import { propertyChecks } from './checks/properties.ts';
import { idInputChecks } from './checks/id-input.ts';
import { robustnessChecks } from './checks/robustness.ts';
import { urlClientChecks } from './checks/url-clients.ts';
import { urlClientAuthChecks } from './checks/url-client-auth.ts';
import { bridgeFuzzChecks } from './checks/fuzz.ts';
import { gapChecks } from './checks/gaps.ts';
import { pushChecks } from './checks/push.ts';
import { transactionMatrixChecks } from './checks/transactions-matrix.ts';
import { codeMatrixChecks } from './checks/codes-matrix.ts';
import { clientAssertionChecks } from './checks/client-assertion-matrix.ts';
import { clientMatrixChecks } from './checks/clients-matrix.ts';
import { tokenLifecycleChecks } from './checks/tokens-lifecycle.ts';
import { kindsMatrixChecks } from './checks/kinds-matrix.ts';

export type { BridgeTarget } from './driver.ts';

export async function bridgeSuite(given: BridgeTarget): Promise<SuiteLoad> {
  let network;
  try {
    network = given.network ?? (await viaAuthority(given.authority));
  } catch (error) {
    throw new ConfigError(`the test authority cannot be reached: ${(error as Error).message}`);
  }
  const target: BridgeTarget = { ...given, network };
  const http = new HttpClient({ ...network, timeoutMs: target.requestTimeoutMs });
  try {
    await http.get(`${target.issuer}/.well-known/openid-configuration`, { noCookies: true });
  } catch (error) {
    if (error instanceof HttpError) throw new ConfigError(`the bridge at ${target.issuer} does not answer: ${error.message}`);
    throw error;
  } finally {
    await http.close();
  }
  return { checks: bridgeChecks(target), skipped: [], coverageDocs: [2] };
}

/** Every check of the suite, built without touching the network (the matrix lists them against a placeholder target). */
export function bridgeChecks(target: BridgeTarget): Check[] {
  return [
    ...surfaceChecks(target),
    ...authorizeChecks(target),
    ...accountChecks(target),
    ...consoleChecks(target),
    ...tokenChecks(target),
    ...tokenFormChecks(target),
    ...authorizeFormChecks(target),
    ...promptConsentChecks(target),
    ...transactionViewChecks(target),
    ...signerLinkChecks(target),
    ...loginHintChecks(target),
    ...idInputChecks(target),
    ...urlClientChecks(target),
    ...urlClientAuthChecks(target),
    ...gapChecks(target),
    // The code's window first in their shared lane: the transaction's then identifies after the
    // moment bridge/lifetimes/expired does, not with it.
    ...codeMatrixChecks(target),
    ...clientAssertionChecks(target),
    ...transactionMatrixChecks(target),
    ...clientMatrixChecks(target),
    ...tokenLifecycleChecks(target),
    ...kindsMatrixChecks(target),
    ...pushChecks(target),
    ...robustnessChecks(target),
    ...propertyChecks(target),
    ...bridgeFuzzChecks(target),
  ];
}
