// Deliberately broken push to the app (hidden --break flags, only with SVC_REFERENCE_ALLOW_BREAKAGE=1),
// each breaking one MUST of document 2, Authentication 7. push.ts asks only "is this break on?".

type Breaks = { config: { breakage: ReadonlySet<string> } };
const on = (ctx: Breaks, name: string): boolean => (ctx.config.breakage as ReadonlySet<string>).has(name);

export const PUSH_BREAKAGES = ['push-no-interval', 'push-no-cap', 'push-match-code', 'push-untyped'] as const;

/** push-no-interval and push-no-cap break ob.push.limits: prompts without the wait, or without the cap. */
export const pushLimits = (ctx: Breaks, max: number, intervalMs: number): { max: number; intervalMs: number } => ({
  max: on(ctx, 'push-no-cap') ? Number.MAX_SAFE_INTEGER : max,
  intervalMs: on(ctx, 'push-no-interval') ? 0 : intervalMs,
});

/** push-match-code breaks ob.push.no-match-code: the prompt carries the match code. */
export const leakedMatch = (ctx: Breaks, matchCode: string | null): Record<string, string> => (on(ctx, 'push-match-code') && matchCode !== null ? { match_code: matchCode } : {});

/** push-untyped breaks ob.push.message: the prompt goes out as ordinary mail, without its type. */
export const promptType = (ctx: Breaks, type: string): string | undefined => (on(ctx, 'push-untyped') ? undefined : type);
