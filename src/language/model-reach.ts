/**
 * Whether a library's documents are in languages its embedding model reads. The built-in model reads English only:
 * a library mostly in other languages is searched by the keyword list alone in practice (their vectors carry little
 * meaning), which the project page and health say, pointing at a multilingual model (docs/models.md#languages).
 */

/** Share of documents in languages the model does not read above which a library is "mostly" unread. */
export const MOSTLY_UNREAD = 0.5;

export interface ModelReach {
  /** The documents' languages the model does not read, most documents first. */
  unread: string[];
  /** Their share of the documents whose language is known, 0–1. */
  unreadShare: number;
  /** More than half of them: the note is shown. */
  mostlyUnread: boolean;
}

/**
 * `documents`: languages and document counts (DocumentStore.languagesIn); `model`: the languages the model reads
 * (Embedder.languages), or undefined when they are unknown or many — then nothing is unread.
 */
export function modelReach(documents: readonly { language: string; documents: number }[], model: readonly string[] | undefined): ModelReach {
  const total = documents.reduce((n, d) => n + d.documents, 0);
  const unreadRows = model ? documents.filter((d) => !model.includes(d.language)) : [];
  const unreadCount = unreadRows.reduce((n, d) => n + d.documents, 0);
  const unreadShare = total === 0 ? 0 : unreadCount / total;
  return { unread: unreadRows.map((d) => d.language), unreadShare, mostlyUnread: unreadShare > MOSTLY_UNREAD };
}

/** What health says when most documents are in languages the model does not read (no counts: health is public). */
export const UNREAD_NOTE =
  'most documents are in languages this embedding model does not read: search finds them by their words (keyword), not their meaning; a multilingual model (bge-m3 through Ollama) reads them — docs/models.md#languages';
