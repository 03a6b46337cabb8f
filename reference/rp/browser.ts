// The coarse browser label now lives in reference/signin/browser.ts (shared with the bridge).
export { browserLabel } from '../signin/browser.ts';
