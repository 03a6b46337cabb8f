// `npm run vectors`: fixtures/ (committed, hand-readable inputs) -> vectors/ (generated, committed).
//
// Every vector is built from the fixtures and CHECKED before anything is written: by the protocol
// core (the verifier, the canonical builders, the codecs), and, where asking the core would only
// check the core against itself, by an independent construction written here from the documents
// (hand-assembled signing lines, digests recomputed with node:crypto, seals reopened with @noble,
// Ed25519 edge cases derived with @noble point arithmetic). Any disagreement throws and nothing is
// written. Output is deterministic: no clock, no randomness, insertion-ordered keys, 2-space JSON
// with a trailing newline. `--check` writes nothing and fails when a committed file differs.
//
// Layout (scripts/vectors/): check.ts (assertions, rule ids, byte helpers), fixtures.ts (the
// fixture files read and re-derived from their labels), proofs.ts (the fixture session proofs),
// emit.ts (the outputs), then one builder per vector file, each with the independent
// re-derivations that check it. Each builder emits when imported: the order below is the order of
// the outputs.
import './vectors/signin.ts';
import './vectors/reference.ts';
import './vectors/id-input.ts';
import './vectors/names.ts';
import './vectors/canonical.ts';
import './vectors/digests.ts';
import './vectors/documents.ts';
import './vectors/fingerprints.ts';
import './vectors/pairing.ts';
import './vectors/encryption.ts';
import './vectors/profiles.ts';
import './vectors/requests.ts';
import './vectors/session-proofs.ts';
import './vectors/audience.ts';
import './vectors/ed25519.ts';
import './vectors/drive-content.ts';
import './vectors/drive-keys.ts';
import { counts, outputs } from './vectors/emit.ts';
import { writeOrCheck } from './lib/outputs.ts';

const check_ = process.argv.includes('--check');
process.exitCode = writeOrCheck(outputs, check_, 'vectors', 'npm run vectors');
if (!check_) for (const [file, n] of counts) process.stdout.write(`  vectors/${file}.json: ${n}\n`);
