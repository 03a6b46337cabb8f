// The in-process nonce store (tests and single-process RPs): protocol's MemoryNonceStore.
export { MemoryNonceStore } from '../../protocol/signin/nonce.ts';
