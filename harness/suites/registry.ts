// The suites `run` knows; `run` itself knows no suite.
import type { SuiteDefinition } from './suite.ts';
import { rpSuiteDefinition } from './rp/suite.ts';

export type { ExternalInput, PreparedSuite, ReferenceInput, SuiteDefinition } from './suite.ts';

export const SUITES: readonly SuiteDefinition[] = [rpSuiteDefinition];

export function suiteNamed(name: string): SuiteDefinition | undefined {
  return SUITES.find((s) => s.name === name);
}
