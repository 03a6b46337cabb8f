// Headless Chromium for the page tests (Debian's /usr/bin/chromium through playwright-core), with
// the flags that make it run here. Two test files launching at once on a loaded machine can run
// past playwright's launch timeout: launches take turns under the run's lock, with a generous
// timeout, and a launch that fails is tried once more.
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, need } from './needs.ts';
import { withLock } from './lock.ts';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];

export interface LaunchOptions {
  /** Extra Chromium flags. */
  args?: string[];
}

export async function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  const executablePath = need(CHROMIUM);
  const launch = () => chromium.launch({ executablePath, args: [...CHROMIUM_ARGS, ...(options.args ?? [])], timeout: 120_000 });
  return withLock('chromium-launch', async () => {
    try {
      return await launch();
    } catch {
      return launch();
    }
  });
}
