/**
 * Slides as blocks, for the PPTX and ODP parsers: a slide's title is a heading (the trail is that one title, so a
 * passage never runs from one titled slide into the next), its body paragraphs and speaker notes follow, and
 * every block carries the slide number as its `page` — what a result cites.
 */
import type { Block, ParsedDocument } from '../types.js';

export interface Slide {
  title: string[];
  body: string[];
  notes: string[];
}

export function slideBlocks(slides: Slide[], title: string | undefined): ParsedDocument {
  const blocks: Block[] = [];
  slides.forEach((slide, i) => {
    const page = i + 1;
    const heading = slide.title.join(' ').replace(/\s+/g, ' ').trim();
    const headings = heading ? [heading] : [];
    if (heading) blocks.push({ text: heading, page, headings, kind: 'heading' });
    for (const text of slide.body) blocks.push({ text, page, headings, kind: 'paragraph' });
    for (const text of slide.notes) blocks.push({ text, page, headings, kind: 'footnote' });
  });
  const doc: ParsedDocument = { blocks, pages: slides.length, warnings: blocks.length ? [] : ['no text found (empty presentation?)'] };
  const chosen = title ?? blocks.find((b) => b.kind === 'heading')?.text;
  if (chosen !== undefined) doc.title = chosen;
  return doc;
}
