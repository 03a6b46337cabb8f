// Every wire variant, keyed `<suite>/<name>` (SVC_REFERENCE_WIRE).
import type { WireVariant } from './wire.ts';
import { RP_WIRE } from './rp.ts';
import { BRIDGE_WIRE } from './bridge.ts';
import { BRIDGE_MATRIX_WIRE } from './bridge-matrix.ts';
import { RELAY_WIRE } from './relay.ts';
import { DRIVE_WIRE } from './drive.ts';
import { DRIVE_MATRIX_WIRE } from './drive-matrix.ts';
import { RELAY_OWNER_WIRE } from './relay-owner.ts';
import { RELAY_CORE_WIRE } from './relay-core.ts';
import { RELAY_SESSIONS_WIRE } from './relay-sessions.ts';

const keyed = (suite: string, table: Record<string, WireVariant>) => Object.fromEntries(Object.entries(table).map(([name, v]) => [`${suite}/${name}`, v]));

export const WIRE_VARIANTS: Record<string, WireVariant> = {
  ...keyed('rp', RP_WIRE),
  ...keyed('bridge', BRIDGE_WIRE),
  ...keyed('bridge', BRIDGE_MATRIX_WIRE),
  ...keyed('relay', RELAY_WIRE),
  ...keyed('relay', RELAY_OWNER_WIRE),
  ...keyed('relay', RELAY_CORE_WIRE),
  ...keyed('relay', RELAY_SESSIONS_WIRE),
  ...keyed('drive', DRIVE_WIRE),
  ...keyed('drive', DRIVE_MATRIX_WIRE),
};
