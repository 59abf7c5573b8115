/**
 * Facet counts of a search or of the document list (docs/api.md#facets): for each facet asked, how many results of the whole list carry
 * each value — the list `total` counts, after filters and access, in its unit (passages, or documents when grouped),
 * never only the page. A result counts once per value it has: a document under each of its labels, a passage under
 * its document's type. Where `total` is `gte` (a first-stage list stopped at its depth) the counts are of the list as
 * read, and so are at least as large as they say, like `total`.
 *
 * Document fields are read for the list's documents in one query each (their rows, labels, metadata).
 */
import { typeFilterName } from '../core/document-types.js';
import { foldAscii } from '../core/name-order.js';
import type { Scalar } from '../core/filters.js';
import { UNDETERMINED } from '../store/lancedb/chunk-filter.js';
import type { FacetFields, FilterLookups } from '../store/sql/document-filters.js';
import type { LabelStore } from '../store/sql/labels.js';
import { compareNames } from '../core/name-order.js';

export interface FacetValue {
  value: Scalar;
  count: number;
  /** A project's name (the value is its id). */
  name?: string;
  /** A label's colour (in the first project that has the name). */
  color?: string;
}

/**
 * One result of the list: its document and its passages' chunks (one, or every passage of the document in the list);
 * no chunks in the document list (GET /documents), whose `language` is the document's own, as its filter reads it.
 */
export interface FacetUnit {
  documentId: string;
  chunks?: { id: string; _rowid?: bigint }[];
}

export interface FacetDeps {
  /** Each passage's own language (its chunk's), which the `language` filter reads. */
  chunks: { languagesOf(projectIds: readonly string[], refs: FacetUnit['chunks']): Promise<Map<string, string | null>> };
  lookups: Pick<FilterLookups, 'facetFields' | 'metadataOf'>;
  labels: Pick<LabelStore, 'ofDocuments'>;
  users: { emails(ids: readonly string[]): Promise<Map<string, string>> };
  projects: { names(ids: readonly string[]): Promise<{ id: string; name: string }[]> };
}

/** Values listed per facet at most, most frequent first. */
export const MAX_FACET_VALUES = 100;

const yearOf = (ms: number) => new Date(ms).getUTCFullYear();

export class FacetCounter {
  constructor(private readonly deps: FacetDeps) {}

  /** `projectIds`: the searched (or listed) scope, which every unit's chunks lie in. */
  async count(projectIds: readonly string[], units: readonly FacetUnit[], facets: readonly string[]): Promise<Record<string, FacetValue[]>> {
    const out: Record<string, FacetValue[]> = {};
    if (facets.length === 0) return out;
    const ids = [...new Set(units.map((u) => u.documentId))];
    const metaKeys = facets.filter((f) => f.startsWith('metadata.')).map((f) => f.slice('metadata.'.length));
    const [fields, labels, metadata, languages] = await Promise.all([
      this.deps.lookups.facetFields(ids),
      facets.includes('label') ? this.deps.labels.ofDocuments(ids) : undefined,
      metaKeys.length > 0 ? this.deps.lookups.metadataOf(ids, metaKeys) : undefined,
      facets.includes('language') && units.some((u) => u.chunks) ? this.deps.chunks.languagesOf(projectIds, units.flatMap((u) => u.chunks ?? [])) : undefined,
    ]);
    const [emails, projects] = await Promise.all([
      facets.includes('uploaded_by') ? this.deps.users.emails([...new Set([...fields.values()].map((f) => f.userId))]) : undefined,
      facets.includes('project') ? this.deps.projects.names([...new Set([...fields.values()].map((f) => f.projectId))]) : undefined,
    ]);
    const projectNames = new Map((projects ?? []).map((p) => [p.id, p.name]));
    const colors = new Map<string, string>();
    for (const list of labels?.values() ?? []) for (const l of list) if (!colors.has(foldAscii(l.name))) colors.set(foldAscii(l.name), l.color);

    const valuesOf = (facet: string, unit: FacetUnit, f: FacetFields): Scalar[] => {
      switch (facet) {
        case 'type':
          return [typeFilterName(f.contentType)];
        case 'project':
          return [f.projectId];
        case 'uploaded_by':
          return [emails?.get(f.userId) ?? null];
        case 'year':
          return [yearOf(f.createdAt)];
        case 'language':
          // Its passages' own languages, as the filter matches them (a document's is what most of its chunks are in);
          // a listed document's own, null until it is ready.
          if (!unit.chunks) return [f.language];
          return [...new Set(unit.chunks.flatMap((c) => (languages?.has(c.id) ? [languages.get(c.id) ?? UNDETERMINED] : [])))];
        case 'label':
          // One value per name (any case), as the filter matches names.
          return [...new Map((labels?.get(unit.documentId) ?? []).map((l) => [foldAscii(l.name), l.name])).values()];
        default:
          return (metadata?.get(unit.documentId)?.get(facet.slice('metadata.'.length)) ?? []).map((v) => JSON.parse(v) as Scalar);
      }
    };

    for (const facet of facets) {
      const counts = new Map<string, { value: Scalar; count: number }>();
      for (const unit of units) {
        const f = fields.get(unit.documentId);
        if (!f) continue;
        for (const value of valuesOf(facet, unit, f)) {
          const key = facet === 'label' ? foldAscii(String(value)) : JSON.stringify(value);
          const entry = counts.get(key) ?? { value, count: 0 };
          entry.count++;
          counts.set(key, entry);
        }
      }
      out[facet] = [...counts.values()]
        // Ties in the order names sort everywhere (core/name-order.ts), not by the host's locale: the 100 kept are the same on any host.
        .sort((a, b) => b.count - a.count || compareNames(String(a.value), String(b.value)))
        .slice(0, MAX_FACET_VALUES)
        .map((e) => ({
          ...e,
          ...(facet === 'project' ? { name: projectNames.get(String(e.value)) ?? '' } : {}),
          ...(facet === 'label' && colors.has(foldAscii(String(e.value))) ? { color: colors.get(foldAscii(String(e.value)))! } : {}),
        }));
    }
    return out;
  }
}
