#!/usr/bin/env node
// The reference servers (relay, bridge, RP) arrive with their issues; until then this says so.
process.stderr.write('svc-reference: no reference server is implemented yet (see the README roadmap).\n');
process.exit(2);
