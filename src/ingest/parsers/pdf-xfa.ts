/**
 * The pages of a pure XFA form as paragraphs for pdf-blocks.ts. Such a PDF (Adobe LiveCycle / AEM Designer's
 * "dynamic" forms: government and bank forms) draws on its own page only a "Please wait..." placeholder; the form
 * — static text, field captions, and the values filled in, bound from its datasets — lives in its XFA packets.
 * pdf.js lays the form out into pages of HTML-like nodes (pdf/load.ts `xfa`); its own getTextContent for those
 * pages leaves out every field's value, so the tree is read here.
 *
 * Reading order: on a page, what the master page places (headers, footers) and the content areas by their
 * position, top to bottom; inside a content area the order pdf.js laid the form out in, which is the template's —
 * the order its author wrote and the form's tab order. A paragraph's y0/y1 is its place in that order, which is
 * all pdf-blocks.ts needs of them (the first and last paragraphs of a page are its edges).
 */
import type { Paragraph } from './pdf-layout.js';

/** A node of pdf.js's XFA layout (xfa/template.js `$toHTML`): an element with attributes, or a text node. */
export interface XfaNode {
  name: string;
  value?: unknown;
  attributes?: XfaAttributes;
  children?: XfaNode[];
}

interface XfaAttributes {
  class?: string[];
  style?: Record<string, unknown>;
  type?: unknown;
  value?: unknown;
  textContent?: unknown;
  selected?: unknown;
  hidden?: unknown;
}

/** Inputs whose value is no text of the form: a check box's or radio button's is its on/off export value. */
const NOT_TEXT = new Set(['checkbox', 'radio', 'password', 'hidden', 'button', 'submit', 'reset', 'file', 'image']);
/** Drawn shapes, images, and push buttons (controls such as "Validate", "Clear Form", not the form's content). */
const SKIPPED = new Set(['svg', 'img', 'button', 'script', 'style']);
const BLOCK = new Set(['div', 'label', 'p', 'li', 'ul', 'ol', 'table', 'tr', 'td', 'th', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/** One laid-out XFA page's paragraphs, in reading order: a draw's text, a rich text paragraph, a field's caption with its value. */
export function xfaParagraphs(page: XfaNode): Paragraph[] {
  const reader = new Reader();
  const placed = (page.children ?? []).map((node, i) => ({ node, i, top: offset(node, 'top'), left: offset(node, 'left') }));
  placed.sort((a, b) => a.top - b.top || a.left - b.left || a.i - b.i);
  for (const { node } of placed) walk(node, 10, false, reader);
  reader.endParagraph();
  return reader.paragraphs;
}

function walk(node: XfaNode, size: number, inField: boolean, r: Reader): void {
  const a = node.attributes ?? {};
  const style = a.style ?? {};
  // presence="invisible" (hidden and inactive ones pdf.js does not lay out at all).
  if (style['visibility'] === 'hidden' || style['display'] === 'none') return;
  const px = typeof style['fontSize'] === 'string' ? parseFloat(style['fontSize']) : NaN;
  if (px > 0) size = px;
  switch (node.name) {
    case '#text':
      if (typeof node.value === 'string') r.text(node.value, size);
      return;
    case 'br':
      r.endLine();
      return;
    case 'input':
      if (typeof a.type === 'string' && NOT_TEXT.has(a.type)) return;
      if (typeof a.value === 'string') r.lines(a.value, size);
      return;
    case 'textarea':
      if (typeof a.textContent === 'string') r.lines(a.textContent, size);
      return;
    case 'select': {
      // A choice list shows its chosen options; with none chosen pdf.js adds a hidden blank one.
      const chosen = (node.children ?? []).filter((o) => o.attributes?.selected && !o.attributes.hidden && typeof o.value === 'string');
      r.lines(chosen.map((o) => o.value as string).join(', '), size);
      return;
    }
  }
  if (SKIPPED.has(node.name)) return;
  const classes = Array.isArray(a.class) ? a.class : [];
  const field = classes.includes('xfaField');
  // A draw, a field (its caption and value read together) and a rich text paragraph outside a field are each one paragraph.
  const unit = field || classes.includes('xfaDraw') || (node.name === 'p' && !inField);
  if (unit) r.endParagraph();
  else if (BLOCK.has(node.name)) r.endLine();
  const own = typeof a.textContent === 'string' ? a.textContent : typeof node.value === 'string' ? node.value : undefined;
  if (own) r.text(own, size);
  for (const child of node.children ?? []) walk(child, size, inField || field, r);
  if (unit) r.endParagraph();
  else if (BLOCK.has(node.name)) r.endLine();
}

/** A node's CSS offset in points (pdf.js writes XFA measures as px at 1px = 1pt); 0 when it has none. */
function offset(node: XfaNode, side: 'top' | 'left'): number {
  const v = node.attributes?.style?.[side];
  const n = typeof v === 'string' ? parseFloat(v) : NaN;
  return Number.isFinite(n) ? n : 0;
}

class Reader {
  readonly paragraphs: Paragraph[] = [];
  private done: string[] = [];
  private line = '';
  private size = 0;

  text(s: string, size: number): void {
    if (!this.done.length && !this.line.trim()) this.size = size;
    this.line += s;
  }

  /** A value typed into a field: lines of its own. */
  lines(value: string, size: number): void {
    this.endLine();
    for (const line of value.split(/\r\n|\r|\n|\u2028|\u2029/)) {
      this.text(line, size);
      this.endLine();
    }
  }

  endLine(): void {
    const line = this.line.replace(/\s+/g, ' ').trim();
    this.line = '';
    if (line) this.done.push(line);
  }

  endParagraph(): void {
    this.endLine();
    if (!this.done.length) return;
    const y = this.paragraphs.length;
    this.paragraphs.push({ lines: this.done, size: this.size, y0: y, y1: y });
    this.done = [];
  }
}
