#!/usr/bin/env node
// The bridge's operator commands (reference/bridge/operator.ts): tsx compiles on the fly.
import { register } from 'tsx/esm/api';

register();
process.env.SVC_OAUTH_ENTRY = '1';
await import('../reference/bridge/operator.ts');
