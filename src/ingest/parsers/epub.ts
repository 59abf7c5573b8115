/**
 * EPUB (2 and 3): the package document (OPF, found through META-INF/container.xml) gives the title and the
 * spine — the chapters in reading order; each chapter's XHTML goes through the HTML path (html.ts: htmlparser2 reads
 * no DTD, so an XHTML DOCTYPE's entities are never expanded). A block's `page` is its chapter's
 * place in the spine: the chapter is the unit a result cites, its headings the trail. The container and the OPF
 * are read with saxes, which refuses a DOCTYPE (xml.ts).
 */
import { posix } from 'node:path';
import type { Block, ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { htmlBlocks } from './html.js';
import { local, walkXml } from './xml.js';
import { readZip, type ZipLimits } from './zip-guard.js';

const NOUN = 'the EPUB';
const KEEP = /\.(opf|x?html?|xml)$/i;

export async function parse(bytes: Uint8Array, opts: ParseOptions & { zipLimits?: Partial<ZipLimits> } = {}): Promise<ParsedDocument> {
  const { parts } = await readZip(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { noun: NOUN, keep: KEEP }, opts.zipLimits);
  const container = parts.get('META-INF/container.xml');
  if (!container) throw new ParseError(`${NOUN} could not be read: it has no META-INF/container.xml`);
  let opfPath: string | undefined;
  walkXml(container, NOUN, {
    open(name, attrs) {
      if (local(name) === 'rootfile' && !opfPath) opfPath = attrs['full-path'];
    },
  });
  const opf = opfPath ? parts.get(opfPath) : undefined;
  if (!opfPath || !opf) throw new ParseError(`${NOUN} could not be read: its package document (OPF) is missing`);

  const manifest = new Map<string, { href: string; type: string }>();
  const spine: string[] = [];
  let title = '';
  let inTitle = false;
  walkXml(opf, NOUN, {
    open(name, attrs) {
      const n = local(name);
      if (n === 'item' && attrs.id && attrs.href) manifest.set(attrs.id, { href: attrs.href, type: attrs['media-type'] ?? '' });
      else if (n === 'itemref' && attrs.idref && attrs.linear !== 'no') spine.push(attrs.idref);
      else if (n === 'title' && name.startsWith('dc:') && !title) inTitle = true;
    },
    text(t) {
      if (inTitle) title += t;
    },
    close() {
      inTitle = false;
    },
  });

  const dir = posix.dirname(opfPath);
  const blocks: Block[] = [];
  let chapter = 0;
  for (const id of spine) {
    const item = manifest.get(id);
    if (!item || !/html|xml/.test(item.type)) continue;
    const part = posix.normalize(posix.join(dir, decodeURIComponent(item.href.split('#')[0]!)));
    const xhtml = parts.get(part);
    if (!xhtml) continue;
    const chapterBlocks = htmlBlocks(xhtml.toString('utf8'), { page: chapter + 1, xhtml: true }).blocks;
    if (chapterBlocks.length === 0) continue; // a cover image or an empty title page is not a chapter to cite
    chapter++;
    // one by one: a spread of 200,000 items overflows the call stack
    for (const b of chapterBlocks) blocks.push(b);
  }
  const doc: ParsedDocument = { blocks, warnings: blocks.length ? [] : ['no text found (an EPUB of images only?)'] };
  if (title.trim()) doc.title = title.replace(/\s+/g, ' ').trim();
  return doc;
}
