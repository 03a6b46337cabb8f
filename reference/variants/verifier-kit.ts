// The shape of a verifier variant (verifier.ts wraps the RP's verifier with one): a leaf, so the
// modules that declare variants (rp-matrix.ts) and verifier.ts, which lists them, import no loop.
import type { ErrorCode, RuleId } from '../../schemas/ts/rules.ts';

export type Input = Record<string, unknown>;

export type VerifierBreak =
  | { kind: 'ignore'; code: ErrorCode; detail?: string; when?: (r: Input) => boolean }
  | { kind: 'refuse'; when: (r: Input) => boolean; code: ErrorCode }
  | { kind: 'accept-also'; strings: (lines: string[]) => string[] }
  | { kind: 'resolve-first' }
  /** The signature verifies over the canonical string with `field` at any of `near(value)` too (rp-matrix.ts). */
  | { kind: 'unbound'; field: string; near: (value: unknown) => unknown[] }
  /** The session proof's identity signature verifies with its `field` at any of `near(value)` too. */
  | { kind: 'unbound-proof'; field: string; near: (value: unknown) => unknown[] }
  /** The approval is rewritten before the verifier reads it (a normalization of its own). */
  | { kind: 'rewrite'; edit: (r: Input) => Input };

export interface VerifierVariant {
  rule: RuleId;
  /** Rules that restate the same requirement (a limit restating a rule): proven by the same variant. */
  restates?: RuleId[];
  what: string;
  break: VerifierBreak;
}
