/**
 * PowerPoint presentations (.pptx): slides in the presentation's order (`p:sldIdLst`), each slide's title
 * placeholder as its heading, its other shapes' paragraphs as the body (tables and groups included), and its
 * notes slide's body placeholder as the speaker notes; the slide number is the "page" a result cites (slides.ts).
 * Read with saxes after the zip guard.
 */
import type { ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { relationships } from './ooxml.js';
import { slideBlocks, type Slide } from './slides.js';
import { local, walkXml } from './xml.js';
import { readZip, type ZipLimits } from './zip-guard.js';

const NOUN = 'the PowerPoint presentation';
const KEEP = /^(ppt\/presentation\.xml|ppt\/(slides|notesSlides)\/[^/]+\.xml|ppt\/(_rels|slides\/_rels)\/[^/]+\.rels|docProps\/core\.xml)$/i;

export async function parse(bytes: Uint8Array, opts: ParseOptions & { zipLimits?: Partial<ZipLimits> } = {}): Promise<ParsedDocument> {
  const { parts } = await readZip(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { noun: NOUN, keep: KEEP }, opts.zipLimits);
  const presentation = parts.get('ppt/presentation.xml');
  if (!presentation) throw new ParseError(`${NOUN} could not be read: it has no ppt/presentation.xml`);
  const rels = relationships(parts, 'ppt/presentation.xml', NOUN);
  const order: string[] = [];
  walkXml(presentation, NOUN, {
    open(name, attrs) {
      const target = local(name) === 'sldId' ? rels.get(attrs['r:id'] ?? '') : undefined;
      if (target) order.push(target);
    },
  });
  const slides = order.map((part): Slide => {
    const xml = parts.get(part);
    const slide: Slide = { title: [], body: [], notes: [] };
    if (!xml) return slide;
    // one by one: a spread of 200,000 items overflows the call stack
    for (const shape of shapes(xml)) for (const p of shape.paragraphs) (shape.title ? slide.title : slide.body).push(p);
    const notesPart = [...relationships(parts, part, NOUN).values()].find((t) => /notesSlides\//.test(t));
    const notes = notesPart ? parts.get(notesPart) : undefined;
    if (notes) for (const shape of shapes(notes)) if (shape.placeholder === 'body') for (const p of shape.paragraphs) slide.notes.push(p);
    return slide;
  });
  return slideBlocks(slides, coreTitle(parts.get('docProps/core.xml')));
}

interface Shape {
  title: boolean;
  placeholder: string | undefined;
  paragraphs: string[];
}

/** The text shapes of a slide part, each with its paragraphs (`a:p`, text runs `a:t`, line breaks `a:br`). */
function shapes(xml: Buffer): Shape[] {
  const out: Shape[] = [];
  let shape: Shape | undefined;
  let paragraph: string | null = null;
  let inText = false;
  walkXml(xml, NOUN, {
    open(name, attrs) {
      const n = local(name);
      if (n === 'sp' || n === 'graphicFrame') {
        shape = { title: false, placeholder: undefined, paragraphs: [] };
        out.push(shape);
      } else if (n === 'ph' && shape) {
        shape.placeholder = attrs.type ?? 'body';
        shape.title = attrs.type === 'title' || attrs.type === 'ctrTitle';
      } else if (n === 'p' && name.startsWith('a:')) paragraph = '';
      else if (n === 't' && paragraph !== null) inText = true;
      else if (n === 'br' && paragraph !== null) paragraph += '\n';
    },
    text(t) {
      if (inText && paragraph !== null) paragraph += t;
    },
    close(name) {
      const n = local(name);
      if (n === 't') inText = false;
      else if (n === 'p' && name.startsWith('a:') && paragraph !== null) {
        const text = paragraph.replace(/[ \t]+/g, ' ').trim();
        paragraph = null;
        // Slide-number, date and footer placeholders are furniture, not the slide's text.
        if (text && shape && !['sldNum', 'dt', 'ftr', 'hdr', 'sldImg'].includes(shape.placeholder ?? '')) shape.paragraphs.push(text);
      }
    },
  });
  return out;
}

function coreTitle(xml: Buffer | undefined): string | undefined {
  if (!xml) return undefined;
  let inTitle = false;
  let title = '';
  walkXml(xml, NOUN, {
    open: (n) => void (inTitle = n === 'dc:title'),
    text: (t) => void (inTitle && (title += t)),
    close: () => void (inTitle = false),
  });
  return title.trim() || undefined;
}
