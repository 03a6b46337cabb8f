#!/usr/bin/env node
// Runs the TypeScript CLI directly: tsx compiles on the fly, so there is no build step to forget.
import { register } from 'tsx/esm/api';

register();
await import('../harness/cli.ts');
