/**
 * Recovers [start, end) offsets into the original text for WordPiece tokens.
 *
 * @huggingface/tokenizers 0.2 returns ids and token strings but no offsets, and chunking needs them to
 * cut text at token boundaries. A BERT token is a substring of the *normalised* text (clean-up,
 * accent stripping, lower-casing, `##` marking continuations), so we normalise the original text one
 * code point at a time, remember where each normalised character came from, and walk the tokens
 * along it. A token that cannot be matched (a normalisation we do not mirror) gets an empty span at
 * the current position rather than a wrong one.
 */

const WHITESPACE = /\s/u;
const PUNCT = /[\p{P}\p{S}]/u;
const CONTROL = /\p{Cc}|\p{Cf}/u;
const MARK = /\p{Mn}/gu;

interface Normalised {
  chars: string[];
  /** Original [start, end) of each normalised character. */
  spans: [number, number][];
}

function normalise(text: string): Normalised {
  const chars: string[] = [];
  const spans: [number, number][] = [];
  // Lower-cased as a whole, as the tokenizer does: a capital sigma that ends a word is ς there and σ on its own
  // (ΟΔΥΣΣΕΥΣ → οδυσσευς), and a token "ς" matched against "σ" sent the walk to the next ς in the text, every later
  // offset with it. Each code point's share of `lower` is as long as its own lower case (İ → i̇ alike both ways).
  const lower = text.toLowerCase();
  let i = 0;
  let at = 0;
  for (const ch of text) {
    const start = i;
    i += ch.length;
    const own = ch.toLowerCase();
    const lowered = lower.slice(at, at + own.length);
    at += own.length;
    const cp = ch.codePointAt(0)!;
    let out: string;
    if (WHITESPACE.test(ch)) out = ' ';
    else if (cp === 0 || cp === 0xfffd || CONTROL.test(ch)) out = '';
    else out = lowered.normalize('NFD').replace(MARK, '');
    for (const c of out) {
      chars.push(c);
      spans.push([start, i]);
    }
  }
  return { chars, spans };
}

/**
 * Offsets for `tokens` (content tokens only, no [CLS]/[SEP] added by the template) produced from `text`.
 * `literalTokens` are added tokens that are matched verbatim in the original text (e.g. "[SEP]" typed
 * by a user); `unknownToken` stands for a whole word the vocabulary could not split.
 */
export function wordPieceOffsets(
  text: string,
  tokens: string[],
  literalTokens: ReadonlySet<string>,
  unknownToken = '[UNK]',
): [number, number][] {
  const { chars, spans } = normalise(text);
  const offsets: [number, number][] = [];
  let pos = 0;
  const skipSpaces = (): void => {
    while (pos < chars.length && chars[pos] === ' ') pos++;
  };
  const origAt = (p: number): number => (p < spans.length ? spans[p]![0] : text.length);

  for (const token of tokens) {
    skipSpaces();
    if (token === unknownToken) {
      const start = pos;
      if (pos < chars.length && PUNCT.test(chars[pos]!)) pos++;
      else while (pos < chars.length && chars[pos] !== ' ' && !PUNCT.test(chars[pos]!)) pos++;
      offsets.push(pos > start ? [origAt(start), spans[pos - 1]![1]] : [origAt(start), origAt(start)]);
      continue;
    }
    if (literalTokens.has(token)) {
      const at = text.indexOf(token, origAt(pos));
      if (at >= 0) {
        offsets.push([at, at + token.length]);
        while (pos < chars.length && spans[pos]![0] < at + token.length) pos++;
        continue;
      }
    }
    const piece = token.startsWith('##') ? token.slice(2) : token;
    const pieceChars = [...piece];
    let matched = pieceChars.length > 0 && pieceChars.every((c, k) => chars[pos + k] === c);
    if (!matched) {
      // Resynchronise: the next occurrence of the piece, if any.
      const rest = chars.slice(pos).join('');
      const found = rest.indexOf(piece);
      if (found >= 0 && piece.length > 0) {
        pos += [...rest.slice(0, found)].length;
        matched = true;
      }
    }
    if (!matched) {
      offsets.push([origAt(pos), origAt(pos)]);
      continue;
    }
    const start = spans[pos]![0];
    pos += pieceChars.length;
    offsets.push([start, spans[pos - 1]![1]]);
  }
  return offsets;
}
