// A small XML 1.0 well-formedness checker for the JUnit tests: a character scanner (no
// regexes) over tags, attributes, references and characters XML 1.0 forbids.
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function allowedChar(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || code >= 0x10000;
}

function isNameChar(ch: string): boolean {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch === '-' || ch === '_' || ch === ':' || ch === '.';
}

/** Parses `xml` or throws with the offset of the first well-formedness error. */
export function parseXml(xml: string): XmlElement {
  for (const ch of xml) if (!allowedChar(ch.codePointAt(0)!)) throw new Error(`forbidden character U+${ch.codePointAt(0)!.toString(16)}`);
  let i = 0;
  const fail = (msg: string): never => {
    throw new Error(`${msg} at offset ${i}`);
  };
  const skipSpace = (): void => {
    while (i < xml.length && ' \t\r\n'.includes(xml[i]!)) i++;
  };
  const name = (): string => {
    const start = i;
    while (i < xml.length && isNameChar(xml[i]!)) i++;
    if (i === start) fail('name expected');
    return xml.slice(start, i);
  };
  const decode = (raw: string): string => {
    let out = '';
    for (let j = 0; j < raw.length; j++) {
      const ch = raw[j]!;
      if (ch === '<') fail('raw < in text');
      if (ch !== '&') {
        out += ch;
        continue;
      }
      const end = raw.indexOf(';', j);
      if (end === -1) fail('unterminated reference');
      const ref = raw.slice(j + 1, end);
      if (ref.startsWith('#x')) out += String.fromCodePoint(Number.parseInt(ref.slice(2), 16));
      else if (ref.startsWith('#')) out += String.fromCodePoint(Number.parseInt(ref.slice(1), 10));
      else if (ENTITIES[ref] !== undefined) out += ENTITIES[ref];
      else fail(`unknown entity &${ref};`);
      j = end;
    }
    return out;
  };
  if (xml.startsWith('<?xml')) {
    const end = xml.indexOf('?>');
    if (end === -1) fail('unterminated declaration');
    i = end + 2;
  }
  const element = (): XmlElement => {
    if (xml[i] !== '<') fail('< expected');
    i++;
    const el: XmlElement = { name: name(), attrs: {}, children: [], text: '' };
    for (;;) {
      skipSpace();
      if (xml.startsWith('/>', i)) {
        i += 2;
        return el;
      }
      if (xml[i] === '>') {
        i++;
        break;
      }
      const attr = name();
      skipSpace();
      if (xml[i] !== '=') fail('= expected');
      i++;
      skipSpace();
      const quote = xml[i];
      if (quote !== '"' && quote !== "'") fail('quote expected');
      const end = xml.indexOf(quote!, i + 1);
      if (end === -1) fail('unterminated attribute');
      if (attr in el.attrs) fail(`duplicate attribute ${attr}`);
      el.attrs[attr] = decode(xml.slice(i + 1, end));
      i = end + 1;
    }
    for (;;) {
      const lt = xml.indexOf('<', i);
      if (lt === -1) fail(`unclosed <${el.name}>`);
      el.text += decode(xml.slice(i, lt));
      i = lt;
      if (xml.startsWith('</', i)) {
        i += 2;
        const closing = name();
        if (closing !== el.name) fail(`</${closing}> closes <${el.name}>`);
        skipSpace();
        if (xml[i] !== '>') fail('> expected');
        i++;
        return el;
      }
      el.children.push(element());
    }
  };
  skipSpace();
  const root = element();
  skipSpace();
  if (i !== xml.length) fail('content after the root element');
  return root;
}

export function findAll(el: XmlElement, name: string): XmlElement[] {
  const out: XmlElement[] = [];
  const walk = (e: XmlElement): void => {
    if (e.name === name) out.push(e);
    e.children.forEach(walk);
  };
  walk(el);
  return out;
}
