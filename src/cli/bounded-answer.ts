/**
 * Reads an answer's body with a ceiling. No docsearch answer comes near it (a page of at most a few hundred items); a server
 * or proxy that streams without end would otherwise grow the CLI until the machine runs out of memory (an endless
 * answer took it to 11.8 GB in two minutes).
 */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** The body, read only so far: longer than `limit` bytes rejects with `TooLongAnswer`, the rest never read. */
export async function boundedText(res: Response, limit = MAX_ANSWER_BYTES): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new TooLongAnswer(limit);
    }
    chunks.push(value);
  }
  // As Response.text() decodes: UTF-8, a byte-order mark dropped.
  return new TextDecoder().decode(Buffer.concat(chunks));
}

export class TooLongAnswer extends Error {
  override name = 'TooLongAnswer';
  constructor(readonly limit: number) {
    super(`an answer over ${limit / 1024 / 1024} MiB`);
  }
}
