/**
 * Markdown (.md, .markdown) through mdast-util-from-markdown (CommonMark, the micromark tokenizer) with YAML front
 * matter: headings make the heading trail, front matter gives the title and stays out of the text, code blocks are
 * kept as text, links keep their words (not their addresses), inline HTML is reduced to its text. A file nested or
 * packed with delimiters past what micromark reads in reasonable time (markdown-guard.ts) is read as plain text.
 */
import { fromMarkdown } from 'mdast-util-from-markdown';
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter';
import { frontmatter } from 'micromark-extension-frontmatter';
import { parse as parseYaml } from 'yaml';
import type { Block, BlockKind, ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { htmlBlocks } from './html.js';
import { markdownSegments, markdownTooComplex, withoutContainerMarkers } from './markdown-guard.js';
import { decodeText } from './text-encoding.js';
import { fromText } from './txt.js';

interface Node {
  type: string;
  value?: string;
  depth?: number;
  alt?: string | null;
  identifier?: string;
  label?: string | null;
  children?: Node[];
}

export async function parse(bytes: Uint8Array, _opts: ParseOptions = {}): Promise<ParsedDocument> {
  const decoded = decodeText(bytes);
  if (decoded === null) throw new ParseError('the Markdown file could not be read: it is not text');
  const tooComplex = markdownTooComplex(decoded.text);
  if (tooComplex) {
    const doc = fromText(withoutContainerMarkers(decoded.text));
    doc.warnings.unshift(`the Markdown was read as plain text: ${tooComplex}`);
    return doc;
  }
  const blocks: Block[] = [];
  const path: string[] = [];
  const warnings: string[] = [];
  let title: string | undefined;
  let firstHeading: string | undefined;

  const push = (text: string, kind: BlockKind): void => {
    const clean = text.trim();
    if (clean) blocks.push({ text: clean, headings: [...path], kind });
  };
  const visit = (node: Node, kind: BlockKind): void => {
    switch (node.type) {
      case 'yaml':
        title ??= frontMatterTitle(node.value ?? '', warnings);
        return;
      case 'toml':
        title ??= /^title\s*=\s*["']?(.+?)["']?\s*$/m.exec(node.value ?? '')?.[1];
        return;
      case 'heading': {
        const text = inline(node).replace(/\s+/g, ' ').trim();
        if (!text) return;
        path.length = Math.min(path.length, (node.depth ?? 1) - 1);
        path.push(text);
        firstHeading ??= text;
        blocks.push({ text, headings: [...path], kind: 'heading' });
        return;
      }
      case 'paragraph':
        return push(inline(node), kind);
      case 'code':
        return push(node.value ?? '', 'paragraph');
      case 'html':
        for (const b of htmlBlocks(node.value ?? '').blocks) push(b.text, kind);
        return;
      case 'list':
        for (const child of node.children ?? []) visit(child, 'list');
        return;
      case 'thematicBreak':
      case 'definition':
        return;
      default:
        for (const child of node.children ?? []) visit(child, kind);
    }
  };
  const segments = markdownSegments(decoded.text);
  // Front matter opens the file only: a later piece that starts at a thematic break (`---`) is not front matter.
  const read = (segment: string, i: number): Node =>
    fromMarkdown(segment, i === 0 ? { extensions: [frontmatter(['yaml', 'toml'])], mdastExtensions: [frontmatterFromMarkdown(['yaml', 'toml'])] } : {}) as Node;
  const trees = segments.map(read);
  // A reference link resolves against definitions anywhere in the file (usually at its end): a piece whose brackets
  // hold a label defined in another piece is read again after those definitions (only those: the cost stays linear).
  // Brackets are looked for in the piece's source, not its text nodes: a label with emphasis ([*tide* tables]) is
  // split across nodes there, and a definition's label is its source.
  const defined = new Map(trees.length > 1 ? trees.flatMap(definitionLabels) : []);
  if (defined.size) {
    trees.forEach((tree, i) => {
      const own = new Set(definitionLabels(tree).map(([id]) => id));
      const wanted = new Set(bracketed(segments[i]!).flatMap((text) => (own.has(identifier(text)) ? [] : (defined.get(identifier(text)) ?? []))));
      if (wanted.size === 0) return;
      const definitions = [...wanted].map((label) => `[${label}]: #`).join('\n');
      // After the first piece, whose front matter must open it; before the others, where no block is open yet.
      trees[i] = read(i === 0 ? `${segments[0]}\n\n${definitions}\n` : `${definitions}\n\n${segments[i]}`, i);
    });
  }
  for (const tree of trees) visit(tree, 'paragraph');
  const doc: ParsedDocument = { blocks, warnings: blocks.length ? warnings : [...warnings, 'no text found (empty file?)'] };
  const chosen = title ?? firstHeading;
  if (chosen !== undefined) doc.title = chosen;
  return doc;
}

/** Text of a paragraph or heading: words of links and emphasis, code spans, image descriptions, breaks as newlines. */
function inline(node: Node): string {
  switch (node.type) {
    case 'text':
    case 'inlineCode':
      return node.value ?? '';
    case 'break':
      return '\n';
    case 'image':
    case 'imageReference':
      return node.alt ?? '';
    case 'html':
      return /^<br\s*\/?>$/i.test(node.value ?? '') ? '\n' : '';
    default:
      return (node.children ?? []).map(inline).join('');
  }
}

/** The definitions in `node`: identifier and label (whitespace collapsed: a label may span lines). */
function definitionLabels(node: Node): [string, string][] {
  if (node.type === 'definition') return [[node.identifier ?? '', (node.label ?? '').replace(/\s+/g, ' ')]];
  return (node.children ?? []).flatMap(definitionLabels);
}

/** What stands in brackets in `source`: where a reference link's label may be. */
function bracketed(source: string): string[] {
  return [...source.matchAll(/\[([^[\]]+)\]/g)].map((m) => m[1]!);
}

/** A label as CommonMark matches it (and mdast gives a definition's `identifier`): whitespace collapsed, case folded. */
function identifier(label: string): string {
  return label.replace(/[\t\n\r ]+/g, ' ').trim().toLowerCase().toUpperCase().toLowerCase();
}

function frontMatterTitle(source: string, warnings: string[]): string | undefined {
  try {
    // Plain data only: no custom tags, and aliases capped (a "billion laughs" of YAML anchors).
    const data: unknown = parseYaml(source, { maxAliasCount: 100, customTags: [] });
    const title = data && typeof data === 'object' ? (data as Record<string, unknown>).title : undefined;
    return typeof title === 'string' && title.trim() ? title.trim() : undefined;
  } catch {
    warnings.push('the front matter is not valid YAML: it was left out');
    return undefined;
  }
}
