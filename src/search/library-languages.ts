/**
 * The languages a searched library holds, for queries whose own language cannot be told (language/detect.ts): one
 * grouped count over the projects' documents, remembered per set of projects for a minute, so a search pays for it
 * at most once a minute and a new language shows up within one.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

const TTL_MS = 60_000;

export class LibraryLanguages {
  private readonly known = new LRUCache<string, Promise<readonly string[]>>({ max: 1024, ttl: TTL_MS });

  constructor(private readonly documents: { languagesIn(projectIds: readonly string[]): Promise<{ language: string }[]> }) {}

  of(projectIds: readonly string[]): Promise<readonly string[]> {
    const key = createHash('sha256').update([...projectIds].sort().join('\n')).digest('base64url');
    let held = this.known.get(key);
    if (!held) {
      held = this.documents.languagesIn(projectIds).then((rows) => rows.map((r) => r.language));
      // A failed count is not remembered: the next search asks again.
      held.catch(() => this.known.delete(key));
      this.known.set(key, held);
    }
    return held;
  }
}
