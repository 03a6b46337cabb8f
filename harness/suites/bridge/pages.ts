// The bridge's pages read as a browser reads them: parsed by htmlparser2 (attribute quoting and
// entities are the parser's, not a pattern's), and content policies split into their directives.
import { DomUtils, parseDocument } from 'htmlparser2';
import type { Element } from 'domhandler';

const all = (html: string, test: (el: Element) => boolean): Element[] => DomUtils.findAll(test, parseDocument(html).children);

/** `href` as a URL, or undefined when it is none. */
export const parsedUrl = (href: string): URL | undefined => {
  try {
    return new URL(href);
  } catch {
    return undefined;
  }
};

/** The page's link targets in document order. */
export const links = (html: string): string[] => all(html, (el) => el.name === 'a' && typeof el.attribs.href === 'string').map((a) => a.attribs.href!);

/** The page's text, markup and entities resolved. */
export const textOf = (html: string): string => DomUtils.textContent(parseDocument(html));

/** The names of the page's elements among `names` (frames, embeds), in document order. */
export const elementsNamed = (html: string, names: readonly string[]): string[] => all(html, (el) => names.includes(el.name)).map((el) => el.name);

export interface PageForm {
  action: string;
  method: string;
  /** Each named input and button: its type ('checkbox', 'submit', …), name and value. */
  controls: Array<{ type: string; name: string; value: string }>;
}

/** The page's forms with their named controls, in document order. */
export const forms = (html: string): PageForm[] =>
  all(html, (el) => el.name === 'form').map((form) => ({
    action: form.attribs.action ?? '',
    method: (form.attribs.method ?? 'get').toLowerCase(),
    controls: DomUtils.findAll((el) => (el.name === 'input' || el.name === 'button') && typeof el.attribs.name === 'string', form.children).map((el) => ({
      type: (el.attribs.type ?? (el.name === 'button' ? 'submit' : 'text')).toLowerCase(),
      name: el.attribs.name!,
      value: el.attribs.value ?? '',
    })),
  }));

/** The origin of the launcher a sign-in page offers: a form that opens `{launcher_url}/app/` with a handle field (document 2, Visitors without an ID). */
export function launcherOffered(html: string): string | undefined {
  for (const form of all(html, (el) => el.name === 'form' && typeof el.attribs.action === 'string')) {
    const u = parsedUrl(form.attribs.action!);
    if (u?.pathname.endsWith('/app/') && DomUtils.findOne((el) => el.name === 'input' && el.attribs.name === 'handle', form.children)) return u.origin;
  }
  return undefined;
}

/** The sources of a policy's `directives` that are not quoted keywords ('self', 'none', nonces, hashes): origins, hosts and schemes. */
export function foreignSources(policy: string, directives: readonly string[]): string[] {
  const out = new Set<string>();
  for (const part of policy.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name !== undefined && directives.includes(name.toLowerCase())) for (const src of sources) if (!/^'[^']*'$/.test(src)) out.add(src);
  }
  return [...out];
}

/** The origin a policy source names, when it is a whole URL. */
export const originOf = (src: string): string | undefined => parsedUrl(src)?.origin;
