// Base64 as the documents use it: produce base64url without padding; accept any variant
// (standard or URL alphabet, padded or not) but never a mixture, stray characters or bad padding.
const URL_FORM = /^[A-Za-z0-9_-]*={0,2}$/;
const STD_FORM = /^[A-Za-z0-9+/]*={0,2}$/;

export function encodeBase64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/** Decodes any base64 variant; undefined when the text is not base64. */
export function decodeBase64Any(text: string): Uint8Array | undefined {
  if (!URL_FORM.test(text) && !STD_FORM.test(text)) return undefined;
  const pad = text.indexOf('=');
  if (pad !== -1 && text.length % 4 !== 0) return undefined;
  const body = pad === -1 ? text : text.slice(0, pad);
  if (body.length % 4 === 1) return undefined;
  return new Uint8Array(Buffer.from(body, 'base64'));
}

export function utf8(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'utf8'));
}

export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
