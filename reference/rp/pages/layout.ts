// The RP's page shell: the shared shell with the RP's own stylesheet and script.
import { shell } from '../../shared/pages.ts';

export { esc } from '../../shared/pages.ts';

export const RP_STYLESHEET = '/assets/rp.css';
export const RP_SCRIPT = '/assets/rp.js';

export interface LayoutOptions {
  title: string;
  rpName: string;
  script?: boolean;
}

export function layout(options: LayoutOptions, body: string): string {
  return shell({ title: options.title, siteName: options.rpName, stylesheet: RP_STYLESHEET, ...(options.script ? { script: RP_SCRIPT } : {}) }, body);
}
