// Every wire variant, keyed `<suite>/<name>` (SVC_REFERENCE_WIRE).
import type { WireVariant } from './kit.ts';
import { RP_WIRE } from './rp.ts';
import { BRIDGE_WIRE } from './bridge.ts';
import { BRIDGE_MATRIX_WIRE } from './bridge-matrix.ts';
import { RELAY_WIRE } from './relay.ts';
import { DRIVE_WIRE } from './drive.ts';
import { DRIVE_MATRIX_WIRE } from './drive-matrix.ts';
import { DRIVE_ACCESS_WIRE } from './drive-access.ts';
import { RELAY_OWNER_WIRE } from './relay-owner.ts';
import { RELAY_CORE_WIRE } from './relay-core.ts';
import { DRIVE_ANSWER_WIRE } from './drive-answers.ts';
import { DRIVE_LINKS_WIRE } from './drive-links.ts';
import { RELAY_ONCE_WIRE } from './relay-once.ts';
import { RELAY_CURSOR_WIRE } from './relay-cursor.ts';
import { RELAY_REGISTER_WIRE } from './relay-register.ts';
import { RELAY_NAMES_WIRE } from './relay-names.ts';
import { BRIDGE_KINDS_WIRE } from './bridge-kinds.ts';
import { RELAY_SESSIONS_WIRE } from './relay-sessions.ts';
import { RELAY_EVENTS_WIRE } from './relay-events.ts';
import { RELAY_PAIRING_WIRE } from './relay-pairing.ts';
import { RELAY_ENVELOPES_WIRE, RELAY_ROUTES_WIRE } from './relay-envelopes.ts';
import { RELAY_KEYSTORE_WIRE } from './relay-keystore.ts';
import { RELAY_HEADERS_WIRE } from './relay-headers.ts';
import { RELAY_OWNER_RECORDS_WIRE } from './relay-owner-records.ts';

type Suite = 'rp' | 'bridge' | 'relay' | 'drive';

/** Every wire table with the suite that judges it: the one list both the reference and `npm run sensitivity` read. */
export const WIRE_TABLES: ReadonlyArray<readonly [Suite, Record<string, WireVariant>]> = [
  ['rp', RP_WIRE],
  ['bridge', BRIDGE_WIRE],
  ['bridge', BRIDGE_MATRIX_WIRE],
  ['bridge', BRIDGE_KINDS_WIRE],
  ['relay', RELAY_WIRE],
  ['relay', RELAY_OWNER_WIRE],
  ['relay', RELAY_OWNER_RECORDS_WIRE],
  ['relay', RELAY_CORE_WIRE],
  ['relay', RELAY_SESSIONS_WIRE],
  ['relay', RELAY_EVENTS_WIRE],
  ['relay', RELAY_PAIRING_WIRE],
  ['relay', RELAY_ONCE_WIRE],
  ['relay', RELAY_CURSOR_WIRE],
  ['relay', RELAY_REGISTER_WIRE],
  ['relay', RELAY_NAMES_WIRE],
  ['relay', RELAY_ENVELOPES_WIRE],
  ['relay', RELAY_ROUTES_WIRE],
  ['relay', RELAY_KEYSTORE_WIRE],
  ['relay', RELAY_HEADERS_WIRE],
  ['drive', DRIVE_WIRE],
  ['drive', DRIVE_MATRIX_WIRE],
  ['drive', DRIVE_ANSWER_WIRE],
  ['drive', DRIVE_LINKS_WIRE],
  ['drive', DRIVE_ACCESS_WIRE],
];

// A suite's wire variants are looked up by name (`<suite>/<name>`): one name, one variant.
const duplicate = WIRE_TABLES.flatMap(([suite, table]) => Object.keys(table).map((name) => `${suite}/${name}`)).find((key, i, all) => all.indexOf(key) !== i);
if (duplicate !== undefined) throw new Error(`the wire variant ${duplicate} is named twice in WIRE_TABLES`);

export const WIRE_VARIANTS: Record<string, WireVariant> = Object.fromEntries(WIRE_TABLES.flatMap(([suite, table]) => Object.entries(table).map(([name, v]) => [`${suite}/${name}`, v])));
