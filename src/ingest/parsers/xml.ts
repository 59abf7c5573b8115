/**
 * Streaming XML for the office and e-book parsers, through saxes: it has no DTD processing at all — it never
 * fetches an external entity and never expands a declared one — and a document with a DOCTYPE is refused here
 * outright, because no producer of OOXML, ODF or OPF parts writes one and a hostile file uses it for XXE or
 * "billion laughs". Handlers are called in document order; one may throw a ParseError to stop early.
 */
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { cutChars } from '../../core/code-points.js';
import { ParseError } from './errors.js';

export interface XmlHandlers {
  open?(name: string, attrs: Record<string, string>): void;
  close?(name: string): void;
  text?(text: string): void;
}

/** Walks `xml`; `noun` names the file in messages ("the EPUB"). */
export function walkXml(xml: Buffer | string, noun: string, handlers: XmlHandlers): void {
  const parser = new SaxesParser({ xmlns: false, position: false });
  parser.on('doctype', () => {
    throw new ParseError(`${noun} has an XML part with a DOCTYPE (entity declarations are refused: a hostile or broken file)`);
  });
  if (handlers.open) parser.on('opentag', (tag: SaxesTagPlain) => handlers.open!(tag.name, tag.attributes as Record<string, string>));
  if (handlers.close) parser.on('closetag', (tag) => handlers.close!(tag.name));
  if (handlers.text) {
    parser.on('text', handlers.text);
    parser.on('cdata', handlers.text);
  }
  try {
    parser.write(typeof xml === 'string' ? xml : xml.toString('utf8')).close();
  } catch (err) {
    if (err instanceof ParseError) throw err;
    throw new ParseError(`${noun} has a damaged XML part (${cutChars((err instanceof Error ? err.message : String(err)).split('\n')[0]!, 120)})`, { cause: err });
  }
}

/** The local name of a prefixed XML name: "a:t" → "t". */
export const local = (name: string): string => name.slice(name.indexOf(':') + 1);
