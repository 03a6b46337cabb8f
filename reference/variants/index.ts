// Every wire variant, keyed `<suite>/<name>` (SVC_REFERENCE_WIRE).
import type { WireVariant } from './kit.ts';
import { RP_WIRE } from './rp.ts';
import { BRIDGE_WIRE } from './bridge.ts';
import { BRIDGE_MATRIX_WIRE } from './bridge-matrix.ts';
import { RELAY_WIRE } from './relay.ts';
import { DRIVE_WIRE } from './drive.ts';
import { DRIVE_MATRIX_WIRE } from './drive-matrix.ts';
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

const keyed = (suite: string, table: Record<string, WireVariant>) => Object.fromEntries(Object.entries(table).map(([name, v]) => [`${suite}/${name}`, v]));

export const WIRE_VARIANTS: Record<string, WireVariant> = {
  ...keyed('rp', RP_WIRE),
  ...keyed('bridge', BRIDGE_WIRE),
  ...keyed('bridge', BRIDGE_MATRIX_WIRE),
  ...keyed('relay', RELAY_WIRE),
  ...keyed('relay', RELAY_OWNER_WIRE),
  ...keyed('relay', RELAY_CORE_WIRE),
  ...keyed('relay', RELAY_SESSIONS_WIRE),
  ...keyed('relay', RELAY_EVENTS_WIRE),
  ...keyed('relay', RELAY_PAIRING_WIRE),
  ...keyed('drive', DRIVE_WIRE),
  ...keyed('drive', DRIVE_MATRIX_WIRE),
  ...keyed('drive', DRIVE_ANSWER_WIRE),
  ...keyed('drive', DRIVE_LINKS_WIRE),
  ...keyed('relay', RELAY_ONCE_WIRE),
  ...keyed('relay', RELAY_CURSOR_WIRE),
  ...keyed('relay', RELAY_REGISTER_WIRE),
  ...keyed('relay', RELAY_NAMES_WIRE),
  ...keyed('bridge', BRIDGE_KINDS_WIRE),
};
