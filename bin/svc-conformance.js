#!/usr/bin/env node
// Runs the TypeScript CLI directly, with no build step to forget: from a bundle of the sources as
// they are now (bin/bundled.js), or through tsx.
import { runBundled } from './bundled.js';

await runBundled('harness/cli.ts');
