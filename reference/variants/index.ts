// Every wire variant, keyed `<suite>/<name>` (SVC_REFERENCE_WIRE).
import type { WireVariant } from './wire.ts';
import { RP_WIRE } from './rp.ts';
import { BRIDGE_WIRE } from './bridge.ts';
import { RELAY_WIRE } from './relay.ts';
import { DRIVE_WIRE } from './drive.ts';

const keyed = (suite: string, table: Record<string, WireVariant>) => Object.fromEntries(Object.entries(table).map(([name, v]) => [`${suite}/${name}`, v]));

export const WIRE_VARIANTS: Record<string, WireVariant> = { ...keyed('rp', RP_WIRE), ...keyed('bridge', BRIDGE_WIRE), ...keyed('relay', RELAY_WIRE), ...keyed('drive', DRIVE_WIRE) };
