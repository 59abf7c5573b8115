import { z } from 'zod';
import { unstorableProblem } from '../../core/storable-text.js';
import { unsafeTextProblem } from '../../core/unsafe-text.js';
import { type Library, LibraryError } from '../library.js';
import { MAX_NOTE_CHARS } from '../limits.js';
import { structured } from '../tool-result.js';
import { DocumentSummary, requireProject, summary } from './document-summary.js';
import { stringOrNull } from './json-schema.js';
import type { ToolDefinition } from './tool.js';

const output = {
  document: DocumentSummary.extend({
    project_name: stringOrNull().describe("null when this credential may not read projects (a key with write:documents only)"),
  }),
  duplicate: z.boolean().describe('true when the project already held exactly this text: that document is returned'),
};

/** A name for the note: the given one, with .md added when it has no text extension (the library keeps text files). */
function noteName(filename: string): string {
  return /\.(md|markdown|txt|text)$/i.test(filename) ? filename : `${filename}.md`;
}

export const addDocumentTool: ToolDefinition = {
  name: 'add_document',
  scope: 'write:documents',
  config: {
    title: 'Save a note as a document',
    description:
      "Save text or Markdown to the user's library as a new document, so it can be searched later (notes, summaries, decisions). " +
      'It goes to the given project, or the default one. Returns once the document is searchable (or failed). ' +
      'Needs write access to the library.',
    inputSchema: {
      filename: z
        .string()
        .trim()
        .min(1)
        .max(200)
        .superRefine((value, ctx) => {
          const problem = unsafeTextProblem(value);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .regex(/^[^/\\]+$/, 'must not contain / or \\')
        .describe('the document\'s name, e.g. "meeting-notes-2026-03-01.md" (.md is added unless it ends in .md, .markdown, .txt or .text)'),
      text: z
        .string()
        .max(MAX_NOTE_CHARS)
        .regex(/\S/, 'must not be empty or only whitespace: there would be nothing to search')
        // A NUL makes the note a binary file, which fails; a lone surrogate is no text: refused before it is saved.
        .superRefine((value, ctx) => {
          const problem = unstorableProblem(value);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .describe(`the content, plain text or Markdown (at most ${MAX_NOTE_CHARS.toLocaleString('en')} characters)`),
      project_id: z.string().min(1).max(100).optional().describe('the project to add it to (an id from list_projects; default: the default project)'),
    },
    outputSchema: output,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async run(library: Library, args: Record<string, unknown>) {
    const a = args as { filename: string; text: string; project_id?: string };
    // Checked first for the error that names the id; a credential that may not read projects is left to the upload's own check.
    if (a.project_id !== undefined) await unlessWriteOnly(requireProject(library, a.project_id));
    const document = await library.addNote({ filename: noteName(a.filename), text: a.text, ...(a.project_id ? { project_id: a.project_id } : {}) });
    const project = await unlessWriteOnly(library.getProject(document.project_id));
    return structured({ document: summary(document, project?.name ?? null), duplicate: document.duplicate === true });
  },
};

/**
 * What a read answers, or null when the credential lacks read:documents: a key with write:documents only may save a
 * note (as it may upload) though it may not read the project it went to.
 */
async function unlessWriteOnly<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (err) {
    if (err instanceof LibraryError && err.code === 'insufficient_scope') return null;
    throw err;
  }
}
