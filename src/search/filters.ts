/**
 * A search's filters (core/filters.ts, in normal form) as the chunk columns' values (store/lancedb/chunk-filter.ts):
 * uploaders' e-mails become user ids, label names the ids of the labels so named in the projects searched, metadata
 * ranges the values in range there. Each lookup is one query over the projects searched, so a filter never reaches
 * beyond what the caller may read.
 */
import type { DocumentFilters } from '../core/filters.js';
import { canonicalValue } from '../core/filters.js';
import { spellings } from '../core/name-spellings.js';
import { type ChunkFilter, type MetaPredicate, metaEntry } from '../store/lancedb/chunk-filter.js';
import type { FilterLookups } from '../store/sql/document-filters.js';
import type { LabelStore } from '../store/sql/labels.js';

export interface FilterResolverDeps {
  lookups: Pick<FilterLookups, 'userIds' | 'valuesInRange'>;
  labels: Pick<LabelStore, 'idsByName'>;
}

export class FilterResolver {
  constructor(private readonly deps: FilterResolverDeps) {}

  async chunkFilter(projectIds: readonly string[], f: DocumentFilters): Promise<ChunkFilter> {
    const out: ChunkFilter = {};
    if (f.contentTypes) out.contentTypes = f.contentTypes;
    if (f.uploadedFrom !== undefined) out.uploadedFrom = f.uploadedFrom;
    if (f.uploadedBefore !== undefined) out.uploadedBefore = f.uploadedBefore;
    if (f.pathPrefix !== undefined) out.pathPrefix = f.pathPrefix;
    if (f.sourceIds) out.sourceIds = f.sourceIds;
    if (f.languages) out.languages = f.languages;
    const [userIds, labelIds] = await Promise.all([
      f.uploadedBy ? this.deps.lookups.userIds(f.uploadedBy) : undefined,
      f.labels ? this.deps.labels.idsByName(projectIds, f.labels) : undefined,
    ]);
    if (userIds) out.userIds = userIds;
    if (labelIds) out.labelGroups = [...labelIds.values()];
    if (f.metadata) {
      out.meta = await Promise.all(
        f.metadata.map(async (c): Promise<MetaPredicate> => {
          if (c.op === 'exists') return { key: c.key, present: c.exists };
          const values = c.op === 'in' ? c.values.map(canonicalValue) : await this.deps.lookups.valuesInRange(projectIds, c);
          // A key in either Unicode spelling, as the document list reads it (core/name-spellings.ts).
          return { anyOf: spellings(c.key).flatMap((key) => values.map((v) => metaEntry(key, v))) };
        }),
      );
    }
    return out;
  }
}
