// The suites `run` knows; `run` itself knows no suite.
import type { SuiteDefinition } from './suite.ts';
import { rpSuiteDefinition } from './rp/suite.ts';
import { bridgeSuiteDefinition } from './bridge/suite.ts';
import { relaySuiteDefinition } from './relay/suite.ts';
import { driveSuiteDefinition } from './drive/suite.ts';

export type { ExternalInput, PreparedSuite, ReferenceInput, SuiteDefinition } from './suite.ts';

export const SUITES: readonly SuiteDefinition[] = [rpSuiteDefinition, bridgeSuiteDefinition, relaySuiteDefinition, driveSuiteDefinition];

export function suiteNamed(name: string): SuiteDefinition | undefined {
  return SUITES.find((s) => s.name === name);
}
