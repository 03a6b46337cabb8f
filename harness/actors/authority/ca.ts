// The test authority's certificate authority: an ECDSA P-256 CA made with @peculiar/x509 over
// node's webcrypto, persisted as `ca.pem` + `ca-key.pem` in a directory so a restarted authority
// stays trusted, and leaf certificates issued on demand per server name or its parent's wildcard (cached).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isIP } from 'node:net';
import { webcrypto } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
// @peculiar/x509 resolves its ASN.1 classes through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

const crypto = webcrypto as unknown as Crypto;
x509.cryptoProvider.set(crypto);

const ALG: EcKeyGenParams & EcdsaParams = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY = 86_400_000;

export interface CertificateAuthority {
  caPem: string;
  caFile: string;
  /** A TLS context whose certificate names `serverName` (a DNS name or an IP), issued once. */
  contextFor(serverName: string): Promise<SecureContext>;
  /** Certificate and key PEM for `serverName` (for a server's default context). */
  leafFor(serverName: string): Promise<{ cert: string; key: string }>;
}

function pem(der: ArrayBuffer, label: string): string {
  return x509.PemConverter.encode(der, label);
}

async function loadOrCreate(dir: string): Promise<{ cert: x509.X509Certificate; key: CryptoKey; pem: string }> {
  const certFile = join(dir, 'ca.pem');
  const keyFile = join(dir, 'ca-key.pem');
  try {
    const [certPem, keyPem] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
    const cert = new x509.X509Certificate(certPem);
    if (cert.notAfter.getTime() > Date.now() + DAY) {
      const der = x509.PemConverter.decodeFirst(keyPem);
      const key = await crypto.subtle.importKey('pkcs8', der, ALG, false, ['sign']);
      return { cert, key, pem: certPem };
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const keys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=svc-conformance test authority ${Date.now().toString(36)}`,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 3650 * DAY),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const certPem = cert.toString('pem');
  await mkdir(dir, { recursive: true });
  await writeFile(keyFile, pem(await crypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY'), { mode: 0o600 });
  await writeFile(certFile, certPem);
  return { cert, key: keys.privateKey, pem: certPem };
}

/**
 * The name a leaf is issued for: a DNS name of three labels or more is covered by its parent's
 * wildcard (RFC 6125 section 6.4.3), so the many identity hosts of one zone share one leaf and one
 * TLS context instead of costing a signature and a context each; an IP or a shorter name is its own.
 */
function covering(serverName: string): string {
  const name = serverName.toLowerCase();
  const labels = name.split('.');
  return isIP(name) === 0 && labels.length >= 3 ? `*.${labels.slice(1).join('.')}` : name;
}

export async function openCertificateAuthority(dir: string): Promise<CertificateAuthority> {
  const ca = await loadOrCreate(dir);
  const leafKeys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const leafKeyPem = pem(await crypto.subtle.exportKey('pkcs8', leafKeys.privateKey), 'PRIVATE KEY');
  const authorityKeyId = await x509.AuthorityKeyIdentifierExtension.create(ca.cert);
  const leaves = new Map<string, Promise<{ cert: string; key: string }>>();
  const contexts = new Map<string, Promise<SecureContext>>();

  const leafFor = (serverName: string): Promise<{ cert: string; key: string }> => {
    const name = covering(serverName);
    let hit = leaves.get(name);
    if (!hit) {
      hit = (async () => {
        const cert = await x509.X509CertificateGenerator.create({
          subject: `CN=${name}`,
          issuer: ca.cert.subject,
          notBefore: new Date(Date.now() - DAY),
          notAfter: new Date(Date.now() + 90 * DAY),
          signingAlgorithm: ALG,
          publicKey: leafKeys.publicKey,
          signingKey: ca.key,
          extensions: [
            new x509.BasicConstraintsExtension(false, undefined, true),
            new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
            new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
            new x509.SubjectAlternativeNameExtension([{ type: isIP(name) ? 'ip' : 'dns', value: name }]),
            authorityKeyId,
          ],
        });
        return { cert: cert.toString('pem'), key: leafKeyPem };
      })();
      hit.catch(() => leaves.delete(name));
      leaves.set(name, hit);
    }
    return hit;
  };

  return {
    caPem: ca.pem,
    caFile: join(dir, 'ca.pem'),
    leafFor,
    contextFor(serverName) {
      const name = covering(serverName);
      let hit = contexts.get(name);
      if (!hit) {
        hit = leafFor(name).then(({ cert, key }) => createSecureContext({ cert, key }));
        hit.catch(() => contexts.delete(name));
        contexts.set(name, hit);
      }
      return hit;
    },
  };
}
