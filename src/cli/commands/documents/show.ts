import type { Command } from 'commander';
import { type DocumentRecord, PROJECT } from '../../api-types.js';
import type { Context } from '../../context.js';
import { ApiError } from '../../../terminal/errors.js';
import { emitJson } from '../../output/json.js';

import { printFields } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { openWeb } from '../shared/open-web.js';
import { getDocuments } from './get-document.js';

export interface ShowOptions {
  id: string;
  json: boolean;
  /** --web: open the document's web page instead. */
  web?: boolean;
}

export async function run(opts: ShowOptions, ctx: Context): Promise<void> {
  const [d] = (await getDocuments(ctx, [opts.id])) as [DocumentRecord];
  if (opts.web) return openWeb(ctx, `documents/${encodeURIComponent(d.id)}`);
  if (opts.json) return emitJson(ctx, d);
  const project = await ctx
    .http()
    .get(`/api/v1/projects/${encodeURIComponent(d.project_id)}`, { shape: PROJECT })
    .catch((err: unknown) => {
      // A key that may not read projects still shows the document, with the project's id alone.
      if (err instanceof ApiError && (err.status === 403 || err.status === 404)) return undefined;
      throw err;
    });
  printFields(
    ctx.io,
    [
      ['id', d.id],
      ['filename', d.filename],
      ['path', d.path ?? undefined],
      ['project', project ? `${project.name} (${d.project_id})` : d.project_id],
      ['status', d.status],
      ['progress', d.progress === undefined ? undefined : `${Math.round(d.progress * 100)}%`],
      ['type', d.content_type],
      ['size', { bytes: d.size_bytes }],
      ['pages', d.pages],
      ['chunks', d.chunk_count],
      ['language', d.language_setting ? `${d.language_setting} (set)` : (d.language ?? undefined)],
      ['OCR languages', d.ocr_languages ?? undefined],
      ['sha256', d.sha256],
      ['warnings', d.warnings?.length ? d.warnings.join('; ') : undefined],
      ['error', d.error],
      ['created', { time: d.created_at ?? null }],
      ['updated', { time: d.updated_at ?? null }],
    ],
    ctx.now(),
  );
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('show', {
    summary: 'show one document, its status, warnings and error',
    examples: ['docsearch documents show doc_0m1abc2de3FgHiJkLmNoPq', 'docsearch documents show handbook/leave.pdf', 'docsearch documents show report.pdf --json', 'docsearch documents show report.pdf --web'],
  })
    .argument('<document>', 'id, sync path or file name')
    .option('--web', "open the document's web page instead (prints its URL when no browser opens)")
    .action((id: string, flags: { web?: boolean }) => runF({ id, json: Boolean(ctx.globals().json), ...(flags.web ? { web: true } : {}) }, ctx));
}
