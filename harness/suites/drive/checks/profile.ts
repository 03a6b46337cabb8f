import type { Check } from '../../../run/model.ts';
import type { RelayTarget } from '../driver.ts';
export function profileChecks(_t: RelayTarget): Check[] {
  return [];
}
