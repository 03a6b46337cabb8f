// HTML escaping for text and attribute values. Every RP-supplied or client-supplied string goes
// through `esc` before it reaches a page.
const MAP: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => MAP[c]!);
}
