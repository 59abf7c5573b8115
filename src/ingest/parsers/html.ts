/**
 * HTML (.html, .htm, .xhtml) through htmlparser2's streaming tokenizer: it decodes entities, tolerates broken
 * markup like a browser, and builds no DOM, so a page nested a million elements deep costs a counter, not a
 * stack (the depth is still bounded: such a page is hostile or broken). Kept: the title, headings (→ the heading
 * trail), paragraphs, list items, table rows ("cell | cell"), preformatted text. Left out: scripts, styles, forms'
 * widgets, and the navigation boilerplate (`<nav>`, ARIA navigation/banner/contentinfo landmarks).
 *
 * EPUB chapters (XHTML) and e-mail HTML bodies come through `htmlBlocks` too.
 */
import { Parser } from 'htmlparser2';
import type { Block, BlockKind, ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { decodeText } from './text-encoding.js';

/** Deeper nesting than this is refused: browsers stop nesting long before (Chromium at 512). */
export const MAX_DEPTH = 5_000;

const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'nav', 'iframe', 'object', 'canvas', 'select', 'button', 'head']);
const SKIPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'search']);
const BLOCKS = new Set([
  'p', 'div', 'section', 'article', 'main', 'aside', 'header', 'footer', 'blockquote', 'pre', 'li', 'dt', 'dd', 'tr',
  'table', 'ul', 'ol', 'dl', 'figure', 'figcaption', 'caption', 'address', 'hr', 'body', 'html', 'form', 'fieldset', 'legend', 'details', 'summary',
]);
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);

export interface HtmlBlocks {
  title?: string;
  blocks: Block[];
}

/** Blocks of an HTML page; `page` is set on every block (an EPUB's chapter number). */
export function htmlBlocks(html: string, options: { page?: number; xhtml?: boolean } = {}): HtmlBlocks {
  const blocks: Block[] = [];
  const path: string[] = [];
  let title: string | undefined;
  let titleText: string | null = null;
  let text = '';
  // Whether `text` has more than white space: asked at every table cell, and text.trim() there made a row of
  // 100,000 cells quadratic (1 MB: 48 s).
  let hasText = false;
  let kind: BlockKind = 'paragraph';
  let heading = 0;
  let skipDepth = 0;
  let pre = 0;
  let depth = 0;
  const stack: boolean[] = []; // whether each open element started a skipped subtree

  const flush = (): void => {
    // A single space is left as it is (a match per word ran a paragraph of millions of words out of memory), and
    // trim() rather than /^\s+|\s+$/, which retries from every character of a long run of no-break spaces.
    const body = (pre > 0 ? text : text.replace(/[ \t\r\n\f]{2,}|[\t\r\n\f]/g, ' ')).trim();
    text = '';
    hasText = false;
    if (!body) return;
    if (heading > 0) {
      path.length = Math.min(path.length, heading - 1);
      path.push(body);
      blocks.push(withPage({ text: body, headings: [...path], kind: 'heading' }, options.page));
    } else {
      blocks.push(withPage({ text: body, headings: [...path], kind }, options.page));
    }
  };

  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (!VOID.has(name)) {
          depth++;
          if (depth > MAX_DEPTH) throw new ParseError(`the HTML nests elements more than ${MAX_DEPTH.toLocaleString('en')} deep — refused (a hostile or broken page)`);
        }
        if (name === 'title' && title === undefined && titleText === null) titleText = '';
        const skip = SKIPPED.has(name) || SKIPPED_ROLES.has((attrs.role ?? '').toLowerCase()) || attrs['aria-hidden'] === 'true' || 'hidden' in attrs;
        if (!VOID.has(name)) stack.push(skip);
        if (skip) skipDepth++;
        if (skipDepth > 0) return;
        if (/^h[1-6]$/.test(name)) {
          flush();
          heading = Number(name[1]);
        } else if (BLOCKS.has(name)) {
          flush();
          if (name === 'pre') pre++;
          kind = name === 'li' || name === 'dt' || name === 'dd' ? 'list' : name === 'tr' ? 'table' : 'paragraph';
        } else if (name === 'br') {
          text += '\n';
        } else if ((name === 'td' || name === 'th') && hasText) {
          text += ' | ';
        } else if (name === 'img' && attrs.alt) {
          text += ` ${attrs.alt} `;
          hasText ||= attrs.alt.trim() !== '';
        }
      },
      ontext(data) {
        if (titleText !== null) titleText += data;
        else if (skipDepth === 0) {
          text += data;
          hasText ||= data.trim() !== '';
        }
      },
      onclosetag(name) {
        if (name === 'title' && titleText !== null) {
          title = titleText.replace(/\s+/g, ' ').trim() || undefined;
          titleText = null;
        }
        if (VOID.has(name)) return;
        depth--;
        const skipped = stack.pop();
        if (skipped) {
          skipDepth--;
          return;
        }
        if (skipDepth > 0) return;
        if (/^h[1-6]$/.test(name)) {
          flush();
          heading = 0;
        } else if (BLOCKS.has(name)) {
          flush();
          if (name === 'pre') pre--;
          kind = 'paragraph';
        }
      },
    },
    // XHTML (an EPUB's chapters) is read as HTML that closes `<div/>`: HTML's named entities (&nbsp;) still decode.
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, recognizeSelfClosing: options.xhtml === true },
  );
  parser.write(html);
  parser.end();
  flush();
  const out: HtmlBlocks = { blocks };
  const first = blocks.find((b) => b.kind === 'heading');
  if (title !== undefined) out.title = title;
  else if (first) out.title = first.text;
  return out;
}

function withPage(block: Block, page: number | undefined): Block {
  if (page !== undefined) block.page = page;
  return block;
}

export async function parse(bytes: Uint8Array, _opts: ParseOptions = {}): Promise<ParsedDocument> {
  const decoded = decodeText(bytes);
  if (decoded === null) throw new ParseError('the HTML page could not be read: it is not text');
  const { title, blocks } = htmlBlocks(decoded.text);
  const doc: ParsedDocument = { blocks, warnings: blocks.length ? [] : ['no text found (empty page?)'] };
  if (title !== undefined) doc.title = title;
  return doc;
}
