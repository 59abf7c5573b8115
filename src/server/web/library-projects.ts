import type Router from '@koa/router';
import { modelReach } from '../../language/model-reach.js';
import { z } from 'zod';
import { languagePatch, ProjectDescription, ProjectLanguageSettings, ProjectName } from '../api/projects/fields.js';
import { ANALYSED_LANGUAGES } from '../../language/analyse.js';
import { ocrPackageHint } from '../../ingest/ocr/languages.js';
import { plainMessage } from '../api/validate.js';
import { documentRow, projectDeletePage, projectPage, projectSummary, type LanguageSettingsView, type SharingTyped } from '../../web/pages/project.js';
import { projectsPage } from '../../web/pages/projects.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import type { ProjectAction } from '../../access/roles.js';
import { documentView, projectRows, renderNotFound, userProjects } from './library-common.js';
import { requireFormUser } from './csrf.js';
import { answerAsPage } from './answer-as-page.js';
import { flash } from './flash.js';
import { formBody, formField, formFields } from './form.js';
import { render } from './render.js';
import { requireUser, type WebContext, type WebUser } from './session.js';

/** Most documents the project page lists. */
const DOCUMENTS_SHOWN = 500;


/** The project form's fields, checked with the API's own schemas; an error sentence when they don't pass. */
function readProjectForm(ctx: WebContext): { name: string; description: string; error?: string } {
  const form = { name: formField(ctx, 'name'), description: formField(ctx, 'description') };
  const field = (label: string, schema: z.ZodType<string>, value: string) => {
    const r = schema.safeParse(value);
    return r.success ? { value: r.data } : { error: `${label} ${plainMessage(r.error.issues[0]!)}.` };
  };
  const name = field('Name', ProjectName, form.name);
  const description = field('Description', ProjectDescription, form.description);
  return { name: name.value ?? form.name, description: description.value ?? form.description, error: name.error ?? description.error };
}

async function showProjects(ctx: WebContext, s: Services, user: WebUser, extra: { error?: string; form?: { name: string; description: string } } = {}, status = 200) {
  const projects = await userProjects(s, user);
  const indexing = await s.documents.countInWork(projects.map((p) => p.id));
  render(ctx, projectsPage({ user, csrfToken: ctx.state.session!.csrfToken, projects: await projectRows(s, user, projects, indexing), ...extra }), status);
}

/** The project, when the user may do `action` with it; else the not-found page (null). A 403 is thrown. */
async function projectFor(ctx: WebContext, s: Services, user: WebUser, id: string, action: ProjectAction) {
  const role = await s.access.roleOn(user.actor, id);
  if (!role) {
    renderNotFound(ctx, user, 'project');
    return null;
  }
  return (await s.access.project(user.actor, id, action)).project;
}

export async function showProject(
  ctx: WebContext,
  s: Services,
  user: WebUser,
  id: string,
  extra: { error?: string; tab?: 'documents' | 'sharing' | 'settings'; form?: { name: string; description: string }; sharing?: SharingTyped } = {},
  status = 200,
) {
  // Sharing and settings are the owners' (403 for others, as their forms are).
  const project = await projectFor(ctx, s, user, id, extra.tab === 'sharing' || extra.tab === 'settings' ? 'manage' : 'read');
  if (!project) return;
  const { documents, hasMore } = await s.documents.list([project.id], {}, DOCUMENTS_SHOWN);
  const indexing = await s.documents.countInWork([project.id]);
  const [row] = await projectRows(s, user, [project], indexing);
  const members = row!.role === 'owner' ? await s.sharing.members(user.actor, project.id) : null;
  const suggestions = members ? await s.sharing.suggestions(user.actor) : [];
  const languages = await s.documents.languagesIn([project.id]);
  const languageSettings = extra.tab === 'settings' ? await languageSettingsView(s, project) : undefined;
  render(
    ctx,
    projectPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      project: row!,
      members,
      suggestions,
      documents: documents.map(documentView),
      more: hasMore,
      languages: { documents: languages, model: { id: s.embedder.id, languages: s.embedder.languages ?? null }, ...modelReach(languages, s.embedder.languages) },
      limits: { maxFileMb: s.config.maxUploadMb, maxFiles: s.config.maxFiles },
      ...(languageSettings ? { languageSettings } : {}),
      ...extra,
    }),
    status,
  );
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' });

/** The Settings tab's Languages form: the project's settings, the languages analysed, the OCR languages installed. */
async function languageSettingsView(s: Services, project: { language: string | null; ocrLanguages: string | null }): Promise<LanguageSettingsView> {
  const codes = new Set([...ANALYSED_LANGUAGES, ...(project.language ? [project.language] : [])]);
  const languages = [...codes].map((code) => ({ code, name: languageNames.of(code) ?? code })).sort((a, b) => a.name.localeCompare(b.name, 'en'));
  const installed = s.ocr ? await s.ocr.installed() : [];
  const missing = s.ocr ? (project.ocrLanguages?.split('+') ?? []).filter((c) => !installed.includes(c)) : [];
  return {
    language: project.language,
    languages,
    ocrLanguages: project.ocrLanguages,
    ocr: s.ocr ? { default: s.ocr.languages, installed } : null,
    missing: missing.map((code) => ({ code, install: ocrPackageHint(code) })),
  };
}

/** Projects list, create, project page (rename, describe, delete with a confirmation), and its live status feed. */
export function projectRoutes(router: Router<AppState>, s: Services): void {
  router.get('projects', '/projects', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await showProjects(ctx, s, user);
  });

  router.post('projects.create', '/projects', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const form = readProjectForm(ctx);
    // Refused, the list says why with what was typed, after a 303 to it (a reload re-posted the form).
    const refusedAt = () => answerAsPage(ctx, '/projects');
    if (form.error) {
      refusedAt();
      return showProjects(ctx, s, user, { error: form.error, form }, 400);
    }
    s.access.requireCreate(user.actor);
    await s.projects.ensureDefault(user.id);
    const project = await s.projects.create(user.id, { name: form.name, description: form.description });
    if (!project) {
      refusedAt();
      return showProjects(ctx, s, user, { error: `A project named “${form.name}” already exists.`, form }, 409);
    }
    ctx.status = 303;
    ctx.redirect(`/projects/${project.id}`);
  });

  router.get('project', '/projects/:id', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await showProject(ctx, s, user, ctx.params.id!);
  });

  // The project's Sharing and Settings tabs (owners), one URL each.
  for (const tab of ['sharing', 'settings'] as const) {
    router.get(`project.${tab}`, `/projects/:id/${tab}`, async (ctx) => {
      const user = await requireUser(ctx, s);
      if (user) await showProject(ctx, s, user, ctx.params.id!, { tab });
    });
  }

  router.post('project.edit', '/projects/:id/edit', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const form = readProjectForm(ctx);
    const typed = { name: formField(ctx, 'name'), description: formField(ctx, 'description') };
    // Refused, the Settings tab says why with what was typed, after a 303 (a reload re-posted the form).
    const refusedAt = () => answerAsPage(ctx, `/projects/${ctx.params.id!}/settings`);
    if (form.error) {
      refusedAt();
      return showProject(ctx, s, user, ctx.params.id!, { error: form.error, tab: 'settings', form: typed }, 400);
    }
    if (!(await projectFor(ctx, s, user, ctx.params.id!, 'manage'))) return;
    const result = await s.projects.update(ctx.params.id!, { name: form.name, description: form.description });
    if (result === 'conflict') {
      refusedAt();
      return showProject(ctx, s, user, ctx.params.id!, { error: `Its owner already has a project named “${form.name}”.`, tab: 'settings', form: typed }, 409);
    }
    if (!result) return renderNotFound(ctx, user, 'project');
    flash(ctx, 'Saved the name and description.');
    ctx.status = 303;
    ctx.redirect(`/projects/${result.id}/settings`);
  });

  // The Languages form posts what PATCH /api/v1/projects/{id} takes (its schema checks it): the document language
  // ('' detects it) and the OCR languages ticked (none: the server's); OCR's are left alone when OCR is off.
  router.post('project.languages', '/projects/:id/languages', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const ticked = formFields(ctx, 'ocr_languages');
    const parsed = z
      .object(ProjectLanguageSettings)
      .safeParse({ language: formField(ctx, 'language') || null, ...(s.ocr ? { ocr_languages: ticked.length > 0 ? ticked.join('+') : null } : {}) });
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      answerAsPage(ctx, `/projects/${ctx.params.id!}/settings`);
      return showProject(ctx, s, user, ctx.params.id!, { error: `${issue.path[0] === 'language' ? 'Document language' : 'OCR languages'} ${plainMessage(issue)}.`, tab: 'settings' }, 400);
    }
    if (!(await projectFor(ctx, s, user, ctx.params.id!, 'manage'))) return;
    const result = await s.projects.update(ctx.params.id!, languagePatch(parsed.data));
    if (!result || result === 'conflict') return renderNotFound(ctx, user, 'project');
    flash(ctx, 'Saved the languages: new uploads get them.');
    ctx.status = 303;
    ctx.redirect(`/projects/${result.id}/settings#languages`);
  });

  router.get('project.delete.confirm', '/projects/:id/delete', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const project = await projectFor(ctx, s, user, ctx.params.id!, 'manage');
    if (!project) return;
    if (project.isDefault) return showProject(ctx, s, user, project.id, { error: 'The default project can’t be deleted.', tab: 'settings' }, 409);
    const [row, trash] = await Promise.all([projectRows(s, user, [project]), s.documents.trashedIn([project.id])]);
    render(ctx, projectDeletePage({ user, csrfToken: ctx.state.session!.csrfToken, project: row[0]!, trashed: trash.documentIds.length }));
  });

  router.post('project.delete', '/projects/:id/delete', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const project = await projectFor(ctx, s, user, ctx.params.id!, 'manage');
    if (!project) return;
    if (project.isDefault) return showProject(ctx, s, user, project.id, { error: 'The default project can’t be deleted.', tab: 'settings' }, 409);
    await s.projectRemoval.remove(project.id);
    ctx.status = 303;
    ctx.redirect('/projects');
  });

  // What the project page's script polls while documents are queued or processing: each row's state, and
  // its markup from the same template as the page, so the script never builds HTML itself.
  router.get('project.documents', '/projects/:id/documents.json', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const project = await projectFor(ctx, s, user, ctx.params.id!, 'read');
    if (!project) return;
    const { documents } = await s.documents.list([project.id], {}, DOCUMENTS_SHOWN);
    const csrf = ctx.state.session!.csrfToken;
    const [row] = await projectRows(s, user, [project], await s.documents.countInWork([project.id]));
    ctx.body = {
      summary: projectSummary(row!),
      documents: documents.map((d) => ({ id: d.id, status: d.status, progress: d.progress, row: documentRow(documentView(d), csrf, row!.role).value })),
    };
  });
}
