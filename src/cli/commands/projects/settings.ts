import type { Command } from 'commander';
import { PROJECT } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { UsageError } from '../../../terminal/errors.js';
import { notice } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';
import { resolveProject } from '../shared/resolve-project.js';

export interface SettingsOptions {
  project: string;
  /** A code, or "auto" to clear the setting. */
  language?: string;
  ocrLanguages?: string;
  json: boolean;
}

/** "auto" (or "default") clears a setting: null on the wire. */
const value = (v: string | undefined) => (v === undefined ? undefined : ['auto', 'default'].includes(v.toLowerCase()) ? null : v);

export async function run(opts: SettingsOptions, ctx: Context): Promise<void> {
  const p = await resolveProject(ctx, opts.project);
  const body = { language: value(opts.language), ocr_languages: value(opts.ocrLanguages) };
  if (body.language === undefined && body.ocr_languages === undefined) throw new UsageError('nothing to change: give --language or --ocr-languages');
  const updated = await ctx.http().patch(`/api/v1/projects/${encodeURIComponent(p.id)}`, body, { shape: PROJECT });
  if (opts.json) return emitJson(ctx, updated);
  notice(ctx.io, `project ${updated.name}: language ${updated.language ?? 'detected per chunk'}, OCR languages ${updated.ocr_languages ?? "the server's"} (for uploads from now on)`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('settings', {
    summary: "set the language and OCR languages a project's uploads get",
    examples: ['docsearch projects settings archiv --ocr-languages deu+eng', 'docsearch projects settings archiv --language de', 'docsearch projects settings archiv --ocr-languages auto'],
  })
    .argument('<project>', 'project name or id')
    .option('--language <code>', "the language its uploads' text is analysed in (ISO 639-1: de, zh), or auto: detected per chunk")
    .option('--ocr-languages <langs>', "the languages its uploads' scanned pages are read in (Tesseract codes joined by +: deu+eng), or auto: the server's --ocr-languages")
    .action((project: string, flags: { language?: string; ocrLanguages?: string }) =>
      runF({ project, language: flags.language, ocrLanguages: flags.ocrLanguages, json: Boolean(ctx.globals().json) }, ctx),
    );
}
