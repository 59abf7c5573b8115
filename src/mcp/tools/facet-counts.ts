import { z } from 'zod';
import { FACETS } from '../../core/facet-names.js';
import { Facets } from '../../core/filters.js';

/** `facets` asked of `search` and `list_documents`: the facet names are in no enum of the schema, so this sentence is all a model learns of them. */
export const facetsInput = (list: string) => Facets.optional().describe(`count ${list} by these: ${FACETS.join(', ')}, metadata.<key> (answered in \`facets\`)`);

/** The counts answered (docs/api.md#facets), per facet its values, most frequent first. */
export const facetCounts = (list: string) =>
  z
    .record(
      z.string(),
      z.array(
        z.object({
          value: z.union([z.string().max(100_000), z.number(), z.boolean(), z.null()]).describe('what the filter of the same name takes: a type name, a project id, an e-mail, a year, a label name, a language, a metadata value'),
          count: z.number().int().describe(`${list} (not only this page) with this value`),
          name: z.string().optional().describe("a project's name"),
          color: z.string().optional().describe("a label's colour"),
        }),
      ),
    )
    .optional()
    .describe(`with \`facets\` asked: per facet, its values over ${list}, most frequent first`);
