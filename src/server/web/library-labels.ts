import type Router from '@koa/router';
import { z } from 'zod';
import { isAppError } from '../../core/errors.js';
import { foldAscii } from '../../core/name-order.js';
import { LabelName, MAX_FILTER_VALUES } from '../../core/filters.js';
import { LABEL_COLORS, type Label, type LabelColor } from '../../store/sql/labels.js';
import { sentence } from '../../web/format.js';
import { labelDeletePage, labelsPage, type LabelRow } from '../../web/pages/labels.js';
import { parseLabelField } from '../api/labels/names.js';
import { LABEL_PAGE, labelListScope } from '../api/labels/routes.js';
import { cursorIn, encodeCursor } from '../api/pagination.js';
import { plainMessage } from '../api/validate.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import type { ProjectAction } from '../../access/roles.js';
import { answerAsPage } from './answer-as-page.js';
import { requireFormUser } from './csrf.js';
import { flash } from './flash.js';
import { formBody, formField, formFields } from './form.js';
import { queryString, renderNotFound } from './library-common.js';
import { documentFor, showDocument } from './library-documents.js';
import { render } from './render.js';
import { requireUser, type WebContext, type WebUser } from './session.js';

/**
 * A project's Labels tab (the vocabulary of docs/api.md#labels, through the same LabelService as the REST routes):
 * viewers see it with counts, editors add, rename, recolour and delete; and the label editor of a document's page.
 */

const Color = z.enum(LABEL_COLORS);

/** The project and the user's role on it, when they may do `action`; else the not-found page (null). A 403 is thrown. */
async function projectFor(ctx: WebContext, s: Services, user: WebUser, id: string, action: ProjectAction) {
  if (!(await s.access.roleOn(user.actor, id))) {
    renderNotFound(ctx, user, 'project');
    return null;
  }
  return s.access.project(user.actor, id, action);
}

/** The project's label `labelId`, when the user may change it; else the not-found page (null). */
async function labelFor(ctx: WebContext, s: Services, user: WebUser): Promise<{ projectId: string; label: Label } | null> {
  const found = await projectFor(ctx, s, user, ctx.params.id!, 'edit');
  if (!found) return null;
  const label = await s.labels.get(ctx.params.label_id!);
  if (!label || label.projectId !== found.project.id) {
    renderNotFound(ctx, user, 'label');
    return null;
  }
  return { projectId: found.project.id, label };
}

const rowOf = (l: Label & { documentCount: number }): LabelRow => ({ id: l.id, name: l.name, color: l.color, documents: l.documentCount });

/** Where the tab is: which labels it finds (`q`, none: all of them), from which page on (`cursor`, none: the first). */
type TabPlace = { match: string; cursor?: string | undefined };

const tabHref = (projectId: string, { match, cursor }: TabPlace) => {
  const params = new URLSearchParams({ ...(match ? { q: match } : {}), ...(cursor ? { cursor } : {}) }).toString();
  return `/projects/${projectId}/labels${params ? `?${params}` : ''}`;
};

/** The text a find looks for, as the API's `q` takes it (a text longer than a name finds none). */
const matchOf = (typed: string): string => typed.trim();

/** The tab's place from `q` and `cursor` (a request's, or a form's fields): a cursor of another list or find is dropped (the first page). */
const placeOf = (q: string, cursor: string, projectId: string): TabPlace => {
  const match = matchOf(q);
  return { match, cursor: cursor && cursorIn(cursor, 'lbl', labelListScope(projectId, match)) ? cursor : undefined };
};

/** The page of the tab a form was sent from (its `q` and `cursor` fields), to come back to. */
const formPlace = (ctx: WebContext, projectId: string): TabPlace => placeOf(formField(ctx, 'q'), formField(ctx, 'cursor'), projectId);

async function show(
  ctx: WebContext,
  s: Services,
  user: WebUser,
  extra: { error?: string; form?: { name: string; color: string }; editing?: { id: string; name: string } } = {},
  status = 200,
  place: TabPlace = { match: matchOf(queryString(ctx, 'q')), cursor: queryString(ctx, 'cursor') || undefined },
) {
  const found = await projectFor(ctx, s, user, ctx.params.id!, 'read');
  if (!found) return;
  const { project, role } = found;
  const { match, cursor } = place;
  const scope = labelListScope(project.id, match);
  const after = cursor === undefined ? undefined : cursorIn(cursor, 'lbl', scope);
  const at = after === undefined ? null : await s.labels.page(project.id, LABEL_PAGE, after, match);
  // A link from another list or find, or after a label deleted since: the first page, said.
  const stale = cursor !== undefined && !at;
  const page = at ?? (await s.labels.page(project.id, LABEL_PAGE, undefined, match))!;
  const last = page.labels.at(-1);
  const here = at ? cursor : undefined;
  render(
    ctx,
    labelsPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      project: { id: project.id, name: project.name, isDefault: project.isDefault },
      role,
      labels: page.labels.map(rowOf),
      colors: LABEL_COLORS,
      match,
      cursor: here,
      next: page.more && last ? tabHref(project.id, { match, cursor: encodeCursor(last.id, scope) }) : null,
      first: here ? tabHref(project.id, { match }) : null,
      ...(stale && !extra.error ? { error: 'That page link is out of date; showing the first page.' } : {}),
      ...extra,
    }),
    status,
  );
}

/** The tab again with why a label form was refused, after a 303 to the page it was sent from (answer-as-page.ts). */
function refuse(ctx: WebContext, s: Services, user: WebUser, projectId: string, extra: Parameters<typeof show>[3], status: number, place: TabPlace) {
  answerAsPage(ctx, tabHref(projectId, place));
  return show(ctx, s, user, extra, status, place);
}

/** A label form's name and colour, checked with the API's schemas: the error sentence when they don't pass. */
function readLabelForm(ctx: WebContext): { name: string; color: LabelColor | undefined; error?: string } {
  const raw = formField(ctx, 'name');
  const name = LabelName.safeParse(raw);
  const color = Color.safeParse(formField(ctx, 'color') || undefined);
  if (!name.success) return { name: raw, color: undefined, error: `The name ${plainMessage(name.error.issues[0]!)}.` };
  return { name: name.data, color: color.success ? color.data : undefined, ...(color.success || !formField(ctx, 'color') ? {} : { error: `Choose one of the colours: ${LABEL_COLORS.join(', ')}.` }) };
}

/**
 * Why a labels field (the document page's, the Documents page's bulk one) was refused, naming the label at fault (the API's own message says
 * "labels.3: …", which a person who typed names separated by commas cannot map back).
 */
export function labelFieldProblem(raw: string, message: string): string {
  if (!raw.trim().startsWith('[')) {
    const names = raw.split(',').filter((n) => n.trim() !== '');
    if (names.length > MAX_FILTER_VALUES) return `A document carries at most ${MAX_FILTER_VALUES} labels: ${names.length} were given.`;
    for (const n of names) {
      const r = LabelName.safeParse(n);
      if (!r.success) return `The label “${n.trim()}” ${plainMessage(r.error.issues[0]!)}.`;
    }
  }
  return sentence(message.replace(/^body\./, ''));
}

/**
 * The names a document's label form sends: the ticked ones (each whole: a name such as "[draft]" is no JSON array) and
 * the typed ones, duplicates (any case) once; or why they were refused, in words.
 */
function postedLabels(typed: string, ticked: string[]): string[] | string {
  let names: string[];
  try {
    names = parseLabelField(typed, 'labels');
  } catch (err) {
    if (!isAppError(err)) throw err;
    return labelFieldProblem(typed, err.message);
  }
  for (const n of ticked) {
    const r = LabelName.safeParse(n);
    if (!r.success) return `The label “${n.trim()}” ${plainMessage(r.error.issues[0]!)}.`;
  }
  const all = [...ticked.map((n) => n.trim()), ...names];
  const once = all.filter((n, i) => all.findIndex((m) => foldAscii(m) === foldAscii(n)) === i);
  return once.length > MAX_FILTER_VALUES ? `A document carries at most ${MAX_FILTER_VALUES} labels: ${once.length} were given.` : once;
}

const back = (ctx: WebContext, to: string) => {
  ctx.status = 303;
  ctx.redirect(to);
};

export function labelRoutes(router: Router<AppState>, s: Services): void {
  router.get('project.labels', '/projects/:id/labels', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await show(ctx, s, user);
  });

  router.post('project.labels.add', '/projects/:id/labels', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const found = await projectFor(ctx, s, user, ctx.params.id!, 'edit');
    if (!found) return;
    const form = readLabelForm(ctx);
    const place = formPlace(ctx, found.project.id);
    if (form.error) return refuse(ctx, s, user, found.project.id, { error: form.error, form: { name: form.name, color: formField(ctx, 'color') } }, 400, place);
    try {
      const label = await s.labelService.create(found.project.id, form.name, form.color);
      flash(ctx, `Added the label “${label.name}”.`);
    } catch (err) {
      if (!isAppError(err) || err.status !== 409) throw err;
      return refuse(ctx, s, user, found.project.id, { error: `${sentence(err.message)}`, form: { name: form.name, color: formField(ctx, 'color') } }, 409, place);
    }
    back(ctx, tabHref(found.project.id, place));
  });

  router.post('project.labels.change', '/projects/:id/labels/:label_id', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const found = await labelFor(ctx, s, user);
    if (!found) return;
    const form = readLabelForm(ctx);
    const editing = { id: found.label.id, name: formField(ctx, 'name') };
    // Back on the page the row was on (it may be any of the tab's pages, of all labels or of those a find found).
    const place = formPlace(ctx, found.projectId);
    if (form.error) return refuse(ctx, s, user, found.projectId, { error: `“${found.label.name}” not changed: ${form.error}`, editing }, 400, place);
    try {
      const updated = await s.labelService.update(found.label, { ...(form.name !== found.label.name ? { name: form.name } : {}), ...(form.color ? { color: form.color } : {}) });
      flash(ctx, updated.name === found.label.name ? `Saved “${updated.name}”.` : `Renamed “${found.label.name}” to “${updated.name}”: its documents carry the new name.`);
    } catch (err) {
      if (!isAppError(err) || err.status !== 409) throw err;
      return refuse(ctx, s, user, found.projectId, { error: `“${found.label.name}” not renamed: ${sentence(err.message)}`, editing }, 409, place);
    }
    back(ctx, tabHref(found.projectId, place));
  });

  router.get('project.labels.delete.confirm', '/projects/:id/labels/:label_id/delete', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const found = await labelFor(ctx, s, user);
    if (!found) return;
    // This label's count alone: the vocabulary's would count every label's documents to show one.
    const counted = (await s.labels.withCount(found.label.id)) ?? { ...found.label, documentCount: 0 };
    const place = placeOf(queryString(ctx, 'q'), queryString(ctx, 'cursor'), found.projectId);
    render(ctx, labelDeletePage({ user, csrfToken: ctx.state.session!.csrfToken, projectId: found.projectId, label: rowOf(counted), place, back: tabHref(found.projectId, place) }));
  });

  router.post('project.labels.delete', '/projects/:id/labels/:label_id/delete', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const found = await labelFor(ctx, s, user);
    if (!found) return;
    await s.labelService.delete(found.label);
    flash(ctx, `Deleted the label “${found.label.name}”.`);
    back(ctx, tabHref(found.projectId, formPlace(ctx, found.projectId)));
  });

  // The document page's label editor: the labels it carries become exactly those named (as PATCH /documents/{id} `labels`):
  // each ticked `label` (one name each) and the `labels` typed (names separated by commas or a JSON array, as scripts send).
  router.post('document.labels', '/documents/:id/labels', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const doc = await documentFor(ctx, s, user, ctx.params.id!, 'edit');
    if (!doc) return;
    const typed = formField(ctx, 'labels');
    const ticked = formFields(ctx, 'label');
    const names = postedLabels(typed, ticked);
    // The page again, with what was ticked and typed still in the form to correct (a flash alone lost it), after a 303.
    if (typeof names === 'string') {
      answerAsPage(ctx, `/documents/${doc.id}`);
      return showDocument(ctx, s, user, doc.id, `Labels not changed: ${names}`, 400, { labels: typed, ticked });
    }
    await s.labelService.change([doc], { set: names });
    flash(ctx, names.length === 0 ? `“${doc.filename}” has no labels now.` : `“${doc.filename}” is labelled ${names.map((n) => `“${n}”`).join(', ')}.`);
    back(ctx, `/documents/${doc.id}`);
  });
}
