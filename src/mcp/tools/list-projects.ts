import { z } from 'zod';
import type { Library } from '../library.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../limits.js';
import { structured } from '../tool-result.js';
import type { ToolDefinition } from './tool.js';

const output = {
  projects: z.array(
    z.object({
      id: z.string().describe('pass as `project_id` to search, list_documents or add_document'),
      name: z.string(),
      description: z.string(),
      is_default: z.boolean().describe("the user's own project where documents go when no project is named"),
      role: z.enum(['viewer', 'editor', 'owner']).describe('what the user may do here: viewer reads; editor also adds and changes documents; owner also shares it'),
      owner: z.string().optional().describe("the e-mail of the project's owner (another person's when it was shared with the user)"),
      document_count: z.number().int(),
      size_bytes: z.number().int(),
      updated_at: z.string(),
    }),
  ),
  next_cursor: z.union([z.string().min(1), z.null()]).describe('pass as `cursor` for the next page; null on the last page'),
};

export const listProjectsTool: ToolDefinition = {
  name: 'list_projects',
  scope: 'read:documents',
  config: {
    title: 'List projects',
    description:
      "List the projects the user may read (folders of documents: their own and those shared with them or their groups) with the user's role and how many documents each holds. Use a project's id to limit search, list_documents or add_document to it (add_document needs the editor or owner role).",
    inputSchema: {
      limit: z.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT).describe(`projects on this page (1–${MAX_LIST_LIMIT})`),
      cursor: z.string().min(1).max(400).optional().describe('next_cursor of the previous page'),
    },
    outputSchema: output,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  async run(library: Library, args: Record<string, unknown>) {
    const a = args as { limit: number; cursor?: string };
    const page = await library.listProjects({ limit: a.limit, ...(a.cursor ? { cursor: a.cursor } : {}) });
    return structured({
      projects: page.projects.map((p) => ({
        id: p.id,
        name: p.name,
        description: p.description,
        is_default: p.is_default,
        role: p.role,
        ...(p.owner ? { owner: p.owner } : {}),
        document_count: p.document_count,
        size_bytes: p.size_bytes,
        updated_at: p.updated_at,
      })),
      next_cursor: page.next_cursor,
    });
  },
};
