import { z } from 'zod';
import type { Services } from '../../services.js';
import { decodeCursor, encodeCursor } from '../pagination.js';
import { defineRoute } from '../route.js';
import { ErrorBody, Pagination, Project } from '../schemas.js';
import { projectToWire } from './wire.js';

export const listProjects = (s: Services) =>
  defineRoute({
    name: 'projects.list',
    method: 'GET',
    path: '/projects',
    scope: 'read:documents',
    tag: 'projects',
    summary: "List the caller's projects with metadata and counts (cursor-paginated, creation order).",
    query: Pagination,
    responses: {
      200: { description: 'A page of projects', schema: z.object({ projects: z.array(Project), next_cursor: z.string().nullable() }) },
      400: { description: 'Bad query', schema: ErrorBody },
    },
    async handler({ query, principal }) {
      await s.projects.ensureDefault(principal.userId);
      const { projects, hasMore } = await s.projects.list(principal.userId, query.limit, decodeCursor(query.cursor));
      const last = projects.at(-1);
      return {
        status: 200,
        body: { projects: projects.map(projectToWire), next_cursor: hasMore && last ? encodeCursor(last.id) : null },
      };
    },
  });
