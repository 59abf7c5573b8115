import type { Command } from 'commander';
import { type ApiKey, KEY_LIST } from '../../api-types.js';
import type { Context } from '../../context.js';
import { CliError } from '../../../terminal/errors.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { defineCommand } from '../shared/command.js';
import { confirmDestructive } from '../../../terminal/confirm.js';
import { keyRequest } from './key-request.js';
import { maskedKey } from './list.js';

export interface RevokeOptions {
  id: string;
  yes: boolean;
  json: boolean;
}

/**
 * The key an id or name means; a name two keys share is refused, listing both, so nothing is revoked by guess. A name
 * matches in its case, in either Unicode spelling (one typed on a Mac comes decomposed; a key named before names
 * were stored composed may be either).
 */
export function pickKey(keys: ApiKey[], ref: string): ApiKey {
  const byId = keys.find((k) => k.id === ref);
  if (byId) return byId;
  const named = keys.filter((k) => k.name !== null && k.name.normalize('NFC') === ref.normalize('NFC'));
  if (named.length === 1) return named[0]!;
  if (named.length === 0) throw new CliError(`API key "${ref}" not found`, undefined, 'see your keys with `docsearch keys list`');
  const list = named.map((k) => `  ${k.id}  ${maskedKey(k)}  created ${k.created_at}`).join('\n');
  throw new CliError(`${named.length} API keys are named "${ref}":\n${list}`, undefined, 'revoke one by its id: `docsearch keys revoke <id>`');
}

export async function run(opts: RevokeOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  const { keys } = await keyRequest(ctx, () => http.get('/api/v1/keys', { shape: KEY_LIST }));
  const key = pickKey(keys, opts.id);
  await confirmDestructive(ctx.io, { action: `revoke API key ${key.name ?? key.id} (${maskedKey(key)})`, consequence: 'Anything using it stops working.' }, opts.yes);
  await keyRequest(ctx, () => http.delete(`/api/v1/keys/${encodeURIComponent(key.id)}`));
  if (opts.json) return emitJson(ctx, { revoked: key.id });
  notice(ctx.io, `revoked API key ${key.id} (${maskedKey(key)})`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('revoke', {
    summary: 'revoke an API key',
    description:
      'Revoke an API key; it stops working at once. A name shared by several keys is refused (they are listed): give the id. Asks first on a terminal; elsewhere --yes is required.',
    examples: ['docsearch keys revoke key_0m1abc2de3FgHiJkLmNoPq', 'docsearch keys revoke ci --yes'],
  })
    .argument('<key>', 'key id (or its name)')
    .option('-y, --yes', 'do not ask for confirmation')
    .action((id: string, flags: { yes?: boolean }) => runF({ id, yes: Boolean(flags.yes), json: Boolean(ctx.globals().json) }, ctx));
}
