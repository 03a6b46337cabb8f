import { type Output } from '../lib/outputs.ts';
import { type Json } from './check.ts';
import { NAME } from './fixtures.ts';


export const outputs: Output[] = [];
export const counts: Array<[string, number]> = [];
export function emit(file: string, kind: string, description: string, body: Json, count: number): void {
  const content = { kind, description, profile: NAME, ...body };
  outputs.push({ path: `vectors/${file}.json`, content: `${JSON.stringify(content, null, 2)}\n` });
  counts.push([file, count]);
}
