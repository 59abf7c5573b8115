/**
 * What the OpenDocument parsers (ODT, ODP, ODS) share: the package read through the zip guard (content.xml and
 * meta.xml kept), the document's title from meta.xml, and the inline text rules of `text:p`/`text:h` — `text:s`
 * is spaces, `text:tab` a tab, `text:line-break` a new line; annotations (comments) and tracked deletions are not
 * the document's text.
 */
import { ParseError } from './errors.js';
import { local, walkXml, type XmlHandlers } from './xml.js';
import { readZip, type ZipLimits } from './zip-guard.js';

const KEEP = /^(content|meta)\.xml$/;

export interface OdfPackage {
  content: Buffer;
  title?: string;
}

export async function readOdf(bytes: Uint8Array, noun: string, zipLimits?: Partial<ZipLimits>): Promise<OdfPackage> {
  const { parts } = await readZip(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { noun, keep: KEEP }, zipLimits);
  const content = parts.get('content.xml');
  if (!content) throw new ParseError(`${noun} could not be read: it has no content.xml`);
  const out: OdfPackage = { content };
  const meta = parts.get('meta.xml');
  if (meta) {
    let inTitle = false;
    let title = '';
    walkXml(meta, noun, {
      open: (n) => void (inTitle = n === 'dc:title'),
      text: (t) => void (inTitle && (title += t)),
      close: () => void (inTitle = false),
    });
    if (title.trim()) out.title = title.trim();
  }
  return out;
}

/** Elements whose whole subtree is not text of the document. */
const SKIPPED = new Set(['office:annotation', 'text:tracked-changes', 'text:note-citation', 'office:forms', 'text:sequence-decls', 'svg:title', 'svg:desc', 'presentation:date-time', 'presentation:footer', 'presentation:header']);

/**
 * Walks content.xml with the inline rules applied: `handlers.text` gets the text (spaces, tabs and line breaks
 * included) and never sees skipped subtrees; `open`/`close` see every element outside them.
 */
export function walkOdf(content: Buffer, noun: string, handlers: Required<XmlHandlers>): void {
  let skip = 0;
  walkXml(content, noun, {
    open(name, attrs) {
      if (skip > 0 || SKIPPED.has(name)) {
        skip++;
        return;
      }
      if (name === 'text:s') handlers.text(' '.repeat(Math.min(1000, Number(attrs['text:c'] ?? 1) || 1)));
      else if (name === 'text:tab') handlers.text('\t');
      else if (name === 'text:line-break') handlers.text('\n');
      else handlers.open(name, attrs);
    },
    text(t) {
      if (skip === 0) handlers.text(t);
    },
    close(name) {
      if (skip > 0) {
        skip--;
        return;
      }
      if (name !== 'text:s' && name !== 'text:tab' && name !== 'text:line-break') handlers.close(name);
    },
  });
}

export { local };

/** Collapses runs of spaces and tabs, trims. */
export const clean = (s: string): string => s.replace(/[ \t]+/g, ' ').replace(/ *\n */g, '\n').trim();
