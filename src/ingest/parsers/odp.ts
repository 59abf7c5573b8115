/**
 * OpenDocument presentations (.odp): each `draw:page` is a slide — its title frame (`presentation:class="title"`)
 * is the heading, the other frames its body, `presentation:notes` the speaker notes. The slide number is the
 * "page" a result cites. The placeholders LibreOffice puts on slides and notes pages (slide number, footer, date)
 * hold fields such as "<number>", not words of the slide, and are left out. Read with saxes from content.xml (odf.ts).
 */
import type { ParsedDocument, ParseOptions } from '../types.js';
import { clean, readOdf, walkOdf } from './odf.js';
import { slideBlocks, type Slide } from './slides.js';
import type { ZipLimits } from './zip-guard.js';

const NOUN = 'the OpenDocument presentation (.odp)';
const PLACEHOLDERS = new Set(['page-number', 'footer', 'header', 'date-time']);

export async function parse(bytes: Uint8Array, opts: ParseOptions & { zipLimits?: Partial<ZipLimits> } = {}): Promise<ParsedDocument> {
  const pkg = await readOdf(bytes, NOUN, opts.zipLimits);
  const slides: Slide[] = [];
  let slide: Slide | undefined;
  let where: 'title' | 'body' | 'notes' = 'body';
  let frameClass: string[] = [];
  let notes = 0;
  let text: string | null = null;

  walkOdf(pkg.content, NOUN, {
    open(name, attrs) {
      if (name === 'draw:page') {
        slide = { title: [], body: [], notes: [] };
        slides.push(slide);
      } else if (name === 'presentation:notes') notes++;
      else if (name === 'draw:frame') frameClass.push(attrs['presentation:class'] ?? '');
      else if (name === 'text:p' || name === 'text:h') {
        const frame = frameClass.at(-1) ?? '';
        if (PLACEHOLDERS.has(frame) || (notes > 0 && frame !== 'notes')) return;
        text = '';
        where = notes > 0 ? 'notes' : frame === 'title' ? 'title' : 'body';
      }
    },
    text(t) {
      if (text !== null) text += t;
    },
    close(name) {
      if (name === 'presentation:notes') notes--;
      else if (name === 'draw:frame') frameClass.pop();
      else if ((name === 'text:p' || name === 'text:h') && text !== null) {
        const line = clean(text);
        text = null;
        if (line && slide) slide[where].push(line);
      } else if (name === 'draw:page') frameClass = [];
    },
  });
  return slideBlocks(slides, pkg.title);
}
