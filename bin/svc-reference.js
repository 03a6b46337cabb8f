#!/usr/bin/env node
// Runs the TypeScript CLI of the reference servers directly: tsx compiles on the fly, no build step.
import { register } from 'tsx/esm/api';

register();
process.env.SVC_REFERENCE_ENTRY = '1';
await import('../reference/cli.ts');
