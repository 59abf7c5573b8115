import type Router from '@koa/router';
import type { z } from 'zod';
import { ProjectDescription, ProjectName } from '../api/projects/fields.js';
import { plainMessage } from '../api/validate.js';
import { documentRow, projectDeletePage, projectPage, projectSummary } from '../../web/pages/project.js';
import { projectsPage } from '../../web/pages/projects.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { documentView, projectRow, renderNotFound, userProjects } from './library-common.js';
import { requireFormUser } from './csrf.js';
import { formBody, formField } from './form.js';
import { render } from './render.js';
import { requireUser, type WebContext } from './session.js';

/** Most documents the project page lists. */
const DOCUMENTS_SHOWN = 500;

type User = { id: string; email: string };

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

async function showProjects(ctx: WebContext, s: Services, user: User, extra: { error?: string; form?: { name: string; description: string } } = {}, status = 200) {
  const [projects, indexing] = await Promise.all([userProjects(s, user.id), s.documents.countInWork(user.id)]);
  render(ctx, projectsPage({ user, csrfToken: ctx.state.session!.csrfToken, projects: projects.map((p) => projectRow(p, indexing.get(p.id))), ...extra }), status);
}

async function showProject(ctx: WebContext, s: Services, user: User, id: string, extra: { error?: string } = {}, status = 200) {
  const project = await s.projects.get(user.id, id);
  if (!project) return renderNotFound(ctx, user, 'project');
  const { documents, hasMore } = await s.documents.list(user.id, { projectId: project.id }, DOCUMENTS_SHOWN);
  const indexing = (await s.documents.countInWork(user.id)).get(project.id);
  render(
    ctx,
    projectPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      project: projectRow(project, indexing),
      documents: documents.map(documentView),
      more: hasMore,
      limits: { maxFileMb: s.config.maxUploadMb, maxFiles: s.config.maxFiles },
      ...extra,
    }),
    status,
  );
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
    if (form.error) return showProjects(ctx, s, user, { error: form.error, form }, 400);
    await s.projects.ensureDefault(user.id);
    const project = await s.projects.create(user.id, { name: form.name, description: form.description });
    if (!project) return showProjects(ctx, s, user, { error: `A project named “${form.name}” already exists.`, form }, 409);
    ctx.status = 303;
    ctx.redirect(`/projects/${project.id}`);
  });

  router.get('project', '/projects/:id', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await showProject(ctx, s, user, ctx.params.id!);
  });

  router.post('project.edit', '/projects/:id/edit', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const form = readProjectForm(ctx);
    if (form.error) return showProject(ctx, s, user, ctx.params.id!, { error: form.error }, 400);
    const result = await s.projects.update(user.id, ctx.params.id!, { name: form.name, description: form.description });
    if (result === 'conflict') return showProject(ctx, s, user, ctx.params.id!, { error: `A project named “${form.name}” already exists.` }, 409);
    if (!result) return renderNotFound(ctx, user, 'project');
    ctx.status = 303;
    ctx.redirect(`/projects/${result.id}`);
  });

  router.get('project.delete.confirm', '/projects/:id/delete', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const project = await s.projects.get(user.id, ctx.params.id!);
    if (!project) return renderNotFound(ctx, user, 'project');
    if (project.isDefault) return showProject(ctx, s, user, project.id, { error: 'The default project can’t be deleted.' }, 409);
    render(ctx, projectDeletePage({ user, csrfToken: ctx.state.session!.csrfToken, project: projectRow(project) }));
  });

  router.post('project.delete', '/projects/:id/delete', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const project = await s.projects.get(user.id, ctx.params.id!);
    if (!project) return renderNotFound(ctx, user, 'project');
    if (project.isDefault) return showProject(ctx, s, user, project.id, { error: 'The default project can’t be deleted.' }, 409);
    await s.projectRemoval.remove(user.id, project.id);
    ctx.status = 303;
    ctx.redirect('/projects');
  });

  // What the project page's script polls while documents are queued or processing: each row's state, and
  // its markup from the same template as the page, so the script never builds HTML itself.
  router.get('project.documents', '/projects/:id/documents.json', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const project = await s.projects.get(user.id, ctx.params.id!);
    if (!project) return renderNotFound(ctx, user, 'project');
    const { documents } = await s.documents.list(user.id, { projectId: project.id }, DOCUMENTS_SHOWN);
    const csrf = ctx.state.session!.csrfToken;
    const indexing = (await s.documents.countInWork(user.id)).get(project.id);
    ctx.body = {
      summary: projectSummary(projectRow(project, indexing)),
      documents: documents.map((d) => ({ id: d.id, status: d.status, progress: d.progress, row: documentRow(documentView(d), csrf).value })),
    };
  });
}
