import { z } from 'zod';
import type { Services } from '../../services.js';
import { decodeCursor, encodeCursor } from '../pagination.js';
import { defineRoute } from '../route.js';
import { ErrorBody, Pagination, Project } from '../schemas.js';
import { projectsToWire } from './wire.js';

export const listProjects = (s: Services) =>
  defineRoute({
    name: 'projects.list',
    method: 'GET',
    path: '/projects',
    scope: 'read:documents',
    tag: 'projects',
    summary: "List the projects the caller may read — their own and those shared with them or their groups — with metadata, counts, the caller's role and the owner (cursor-paginated, creation order).",
    query: Pagination,
    responses: {
      200: { description: 'A page of projects', schema: z.object({ projects: z.array(Project), next_cursor: z.string().nullable() }) },
      400: { description: 'Bad query', schema: ErrorBody },
    },
    async handler({ query, principal }) {
      await s.projects.ensureDefault(principal.userId);
      const scope = ['projects', principal.userId];
      const { projects, hasMore } = await s.projects.listAmong(await s.access.readable(principal), query.limit, decodeCursor(query.cursor, 'prj', scope));
      const last = projects.at(-1);
      return {
        status: 200,
        body: { projects: await projectsToWire(s, principal, projects), next_cursor: hasMore && last ? encodeCursor(last.id, scope) : null },
      };
    },
  });
