#!/usr/bin/env node
// Runs the TypeScript CLI of the reference servers directly, with no build step to forget: from a
// bundle of the sources as they are now (bin/bundled.js), or through tsx.
import { runBundled } from './bundled.js';

process.env.SVC_REFERENCE_ENTRY = '1';
await runBundled('reference/cli.ts');
