/**
 * RTF, with a small tokenizer of its own: no well-kept RTF reader for Node exists (the npm ones are unmaintained
 * or render to HTML through a DOM), and the text needs only the core of the format — groups, control words,
 * `\'hh` bytes in the document's code page (`\ansicpg`), `\uN` with its `\ucN` fallback characters skipped, and the
 * destinations that are not text (font and colour tables, styles, pictures, objects, field instructions, `\*`
 * extensions) skipped whole. `\par` ends a paragraph; a paragraph with `\outlinelevelN` (what pandoc, Word and
 * LibreOffice write for headings) is a heading; table cells read "cell | cell". The title comes from `\info`.
 */
import iconv from 'iconv-lite';
import type { Block, ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';

const NOUN = 'the RTF document';
/** Deeper group nesting than this is refused (a hostile file; real documents stay far below). */
const MAX_DEPTH = 1_000;
const SKIPPED = new Set([
  'fonttbl', 'colortbl', 'stylesheet', 'listtable', 'listoverridetable', 'revtbl', 'rsidtbl', 'generator', 'pict',
  'object', 'fldinst', 'themedata', 'colorschememapping', 'latentstyles', 'datastore', 'xmlnstbl', 'header', 'footer',
  'headerl', 'headerr', 'headerf', 'footerl', 'footerr', 'footerf', 'bkmkstart', 'bkmkend', 'filetbl', 'pgdsctbl',
  'mmathPr', 'wgrffmtfilter', 'operator', 'author', 'company', 'subject', 'keywords', 'comment', 'doccomm', 'creatim',
  'revtim', 'printim', 'buptim',
]);

interface State {
  skip: boolean;
  uc: number;
  title: boolean;
}

export async function parse(bytes: Uint8Array, _opts: ParseOptions = {}): Promise<ParsedDocument> {
  const source = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  if (!source.startsWith('{\\rtf')) throw new ParseError(`${NOUN} could not be read: it does not start with {\\rtf`);
  let codepage = 'windows-1252';
  const blocks: Block[] = [];
  const path: string[] = [];
  let title = '';
  let text = '';
  let bytesRun: number[] = [];
  let outline = -1;
  let inTable = false;
  let skipChars = 0;
  // Cells ended in this row whose " | " waits for the row's next text: a row's last cell gets none, with no look
  // back at the text (a regex on it at every \row made a 1.75 MB table of one paragraph take 11 s).
  let cellsEnded = 0;
  const stack: State[] = [];
  let state: State = { skip: false, uc: 1, title: false };

  const flushBytes = (): void => {
    if (bytesRun.length === 0) return;
    const decoded = iconv.encodingExists(codepage) ? iconv.decode(Buffer.from(bytesRun), codepage) : Buffer.from(bytesRun).toString('latin1');
    bytesRun = [];
    emit(decoded);
  };
  const emit = (s: string): void => {
    if (state.skip) return;
    if (state.title) title += s;
    else {
      if (cellsEnded > 0) text += ' | '.repeat(cellsEnded);
      cellsEnded = 0;
      text += s;
    }
  };
  const paragraph = (): void => {
    flushBytes();
    const body = text.replace(/[ \t]+/g, ' ').replace(/ *\n */g, '\n').trim();
    text = '';
    cellsEnded = 0;
    if (!body) return;
    if (outline >= 0 && !inTable) {
      const level = Math.min(6, outline + 1);
      path.length = Math.min(path.length, level - 1);
      path.push(body);
      blocks.push({ text: body, headings: [...path], kind: 'heading' });
    } else blocks.push({ text: body, headings: [...path], kind: inTable ? 'table' : 'paragraph' });
  };

  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    if (ch === '{') {
      flushBytes();
      if (stack.length >= MAX_DEPTH) throw new ParseError(`${NOUN} nests groups more than ${MAX_DEPTH} deep — refused (a hostile or broken file)`);
      stack.push(state);
      state = { ...state };
      // "{\*\dest …}": an extension a reader that does not know it must skip.
      if (source.startsWith('\\*', i + 1)) state.skip = true;
    } else if (ch === '}') {
      flushBytes();
      state = stack.pop() ?? state;
    } else if (ch === '\\') {
      const word = /^\\([a-zA-Z]{1,32})(-?\d{1,10})? ?/.exec(source.slice(i, i + 48));
      if (word) {
        i += word[0].length - 1;
        const [, name, arg] = word as unknown as [string, string, string | undefined];
        const n = arg === undefined ? undefined : Number(arg);
        if (name === 'u' && n !== undefined) {
          flushBytes();
          emit(String.fromCharCode(n < 0 ? n + 65536 : n));
          skipChars = state.uc;
          continue;
        }
        if (name !== 'bin') flushBytes();
        if (SKIPPED.has(name)) state.skip = true;
        else if (name === 'title') state.title = true;
        else if (name === 'uc' && n !== undefined) state.uc = n;
        else if (name === 'ansicpg' && n !== undefined) codepage = `cp${n}`;
        else if (name === 'par' || name === 'sect' || name === 'page') paragraph();
        else if (name === 'pard') {
          outline = -1;
          inTable = false;
        } else if (name === 'outlinelevel' && n !== undefined) outline = n;
        else if (name === 'intbl') inTable = true;
        else if ((name === 'cell' || name === 'nestcell') && !state.skip) cellsEnded++;
        else if (name === 'row' || name === 'nestrow') {
          cellsEnded = 0;
          emit('\n');
        } else if (name === 'line') emit('\n');
        else if (name === 'tab') emit('\t');
        else if (name === 'emdash') emit('—');
        else if (name === 'endash') emit('–');
        else if (name === 'lquote') emit('‘');
        else if (name === 'rquote') emit('’');
        else if (name === 'ldblquote') emit('“');
        else if (name === 'rdblquote') emit('”');
        else if (name === 'bullet') emit('•');
        else if (name === 'bin' && n !== undefined) i += Math.max(0, n);
        skipChars = 0;
        continue;
      }
      const next = source[i + 1];
      if (next === "'") {
        const hex = source.slice(i + 2, i + 4);
        i += 3;
        if (skipChars > 0) skipChars--;
        else if (/^[0-9a-f]{2}$/i.test(hex) && !state.skip) bytesRun.push(parseInt(hex, 16));
      } else if (next === '~') {
        emit('\u00a0');
        i++;
      } else if (next === '_') {
        emit('\u2011');
        i++;
      } else if (next === '\n' || next === '\r') {
        paragraph();
        i++;
      } else if (next !== undefined) {
        emit(next === '-' ? '' : next); // "\-" is an optional hyphen
        i++;
      }
    } else if (ch === '\n' || ch === '\r') {
      continue;
    } else if (skipChars > 0) {
      skipChars--;
    } else {
      flushBytes();
      emit(ch);
    }
  }
  paragraph();
  const doc: ParsedDocument = { blocks, warnings: blocks.length ? [] : ['no text found (empty document?)'] };
  const chosen = title.trim() || blocks.find((b) => b.kind === 'heading')?.text;
  if (chosen) doc.title = chosen;
  return doc;
}
