import { z } from 'zod';
import { notFound } from '../../../core/errors.js';
import { LabelName } from '../../../core/filters.js';
import { MAX_LABEL_CHARS } from '../../../core/label-name.js';
import { nameKey } from '../../../core/name-spellings.js';
import { LABEL_COLORS, type Label, type LabelWithCount } from '../../../store/sql/labels.js';
import type { Services } from '../../services.js';
import type { Actor } from '../../../access/access-control.js';
import { cursorRefused, decodeCursor, encodeCursor, listCursor } from '../pagination.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams, Timestamp } from '../schemas.js';

/**
 * A project's label vocabulary (docs/api.md#labels, an extra of docsearch): viewers list it, editors add, rename,
 * recolour and delete labels. Documents carry labels by name (`labels` on a document, `PATCH /documents/{id}`).
 */

export const LabelSchema = z
  .object({
    id: z.string(),
    project_id: z.string(),
    name: z.string(),
    color: z.enum(LABEL_COLORS),
    document_count: z.number().int().describe('documents carrying it (not those in the trash)'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Label' });

const Color = z.enum(LABEL_COLORS).describe(`one of ${LABEL_COLORS.join(', ')}`);

const labelToWire = (l: Label, documentCount: number) => ({
  id: l.id,
  project_id: l.projectId,
  name: l.name,
  color: l.color,
  document_count: documentCount,
  created_at: new Date(l.createdAt).toISOString(),
  updated_at: new Date(l.updatedAt).toISOString(),
});

/**
 * Labels a page: the web's Labels tab (a team's vocabulary of 1,500, each row with its form, made a page of 2.4 MB)
 * and the API's when a `cursor` comes without a `limit`.
 */
export const LABEL_PAGE = 100;

/** The text a label is looked for by (`q`): no longer than a name may be. */
const LabelMatch = z.string().trim().max(MAX_LABEL_CHARS);

const LabelListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).optional().describe(`labels per page (${LABEL_PAGE} with a cursor alone); without limit and cursor, all of them`),
  cursor: listCursor('lbl').optional().describe('next_cursor of the previous page'),
  q: LabelMatch.optional().describe('only the labels whose name holds this text, in any case of A–Z and either Unicode spelling (`%` and `_` as themselves); empty: all'),
});

/**
 * What a project's labels cursor belongs to (pagination.ts), with the text its labels were found by (folded as they
 * are matched): the web's Labels tab pages the same list. Without one, the scope cursors had before `q` came.
 */
export const labelListScope = (projectId: string, match = '') => (match ? ['labels', projectId, nameKey(match)] : ['labels', projectId]);

const LabelParams = z.strictObject({ id: z.string().min(1).max(100), label_id: z.string().min(1).max(100) });

/** The label of a project the actor may do `action` with; a label of another project is not found. */
async function labelOf(s: Services, actor: Actor, projectId: string, labelId: string, action: 'read' | 'edit'): Promise<Label> {
  await s.access.check(actor, projectId, action);
  const label = await s.labels.get(labelId);
  if (!label || label.projectId !== projectId) throw notFound('label');
  return label;
}

const counted = async (s: Services, label: Label): Promise<LabelWithCount> => (await s.labels.withCount(label.id)) ?? { ...label, documentCount: 0 };

const refusals = {
  403: { description: 'A viewer of the project (changing labels needs an editor)', schema: ErrorBody },
  404: { description: 'No such project (or one the caller may not read), or no such label in it', schema: ErrorBody },
};

export const listLabels = (s: Services) =>
  defineRoute({
    name: 'labels.list',
    method: 'GET',
    path: '/projects/:id/labels',
    scope: 'read:documents',
    tag: 'labels',
    summary: "A project's labels, by name, each with its colour and how many of its documents carry it.",
    params: IdParams,
    query: LabelListQuery,
    responses: {
      200: { description: 'The labels (those found by `q`; a page of them with `limit` or `cursor`)', schema: z.object({ labels: z.array(LabelSchema), next_cursor: z.string().nullable() }) },
      400: { description: 'Bad query (a cursor of another list or `q`, or after a label deleted since; `q` longer than a name)', schema: ErrorBody },
      404: refusals[404],
    },
    async handler({ params, query, principal }) {
      await s.access.check(principal, params.id, 'read');
      // Without either, the whole vocabulary in one answer, as before pages were added (clients that read it so).
      const match = query.q ?? '';
      if (query.limit === undefined && query.cursor === undefined) return { status: 200, body: { labels: (await s.labels.list([params.id], match)).map((l) => labelToWire(l, l.documentCount)), next_cursor: null } };
      const scope = labelListScope(params.id, match);
      const page = await s.labels.page(params.id, query.limit ?? LABEL_PAGE, decodeCursor(query.cursor, 'lbl', scope), match);
      if (!page) throw cursorRefused();
      const last = page.labels.at(-1);
      return { status: 200, body: { labels: page.labels.map((l) => labelToWire(l, l.documentCount)), next_cursor: page.more && last ? encodeCursor(last.id, scope) : null } };
    },
  });

export const createLabel = (s: Services) =>
  defineRoute({
    name: 'labels.create',
    method: 'POST',
    path: '/projects/:id/labels',
    scope: 'write:documents',
    tag: 'labels',
    summary: "Add a label to a project's vocabulary (documents get labels by name, which also adds missing ones). Editors.",
    params: IdParams,
    body: z.strictObject({ name: LabelName.describe('1–64 characters, no commas; each name once per project, any case'), color: Color.optional() }),
    responses: {
      201: { description: 'The new label', schema: LabelSchema },
      ...refusals,
      409: { description: 'The project has a label of that name (any case)', schema: ErrorBody },
    },
    async handler({ params, body, principal }) {
      await s.access.check(principal, params.id, 'edit');
      const label = await s.labelService.create(params.id, body.name, body.color);
      return { status: 201, body: labelToWire(label, 0) };
    },
  });

export const updateLabel = (s: Services) =>
  defineRoute({
    name: 'labels.update',
    method: 'PATCH',
    path: '/projects/:id/labels/:label_id',
    scope: 'write:documents',
    tag: 'labels',
    summary: 'Rename or recolour a label: the documents carrying it keep it under its new name. Editors.',
    params: LabelParams,
    body: z.strictObject({ name: LabelName.optional(), color: Color.optional() }).refine((b) => b.name !== undefined || b.color !== undefined, 'nothing to change (name or color)'),
    responses: {
      200: { description: 'The label as it is now', schema: LabelSchema },
      ...refusals,
      409: { description: 'Another label of the project has that name', schema: ErrorBody },
    },
    async handler({ params, body, principal }) {
      const label = await labelOf(s, principal, params.id, params.label_id, 'edit');
      const updated = await s.labelService.update(label, { ...(body.name !== undefined ? { name: body.name } : {}), ...(body.color !== undefined ? { color: body.color } : {}) });
      return { status: 200, body: labelToWire(updated, (await counted(s, updated)).documentCount) };
    },
  });

export const deleteLabel = (s: Services) =>
  defineRoute({
    name: 'labels.delete',
    method: 'DELETE',
    path: '/projects/:id/labels/:label_id',
    scope: 'write:documents',
    tag: 'labels',
    summary: 'Delete a label: it comes off every document that carried it. Editors.',
    params: LabelParams,
    responses: { 204: { description: 'Deleted' }, ...refusals },
    async handler({ params, principal }) {
      await s.labelService.delete(await labelOf(s, principal, params.id, params.label_id, 'edit'));
      return { status: 204 };
    },
  });
