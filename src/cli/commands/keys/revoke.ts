import type { Command } from 'commander';
import type { ApiKey } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { CliError } from '../../errors.js';
import { notice } from '../../io.js';
import { defineCommand } from '../shared/command.js';
import { confirmDestructive } from '../shared/confirm.js';
import { maskedKey } from './list.js';

export interface RevokeOptions {
  id: string;
  yes: boolean;
  json: boolean;
}

export async function run(opts: RevokeOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  const { keys } = await http.get<{ keys: ApiKey[] }>('/api/v1/keys');
  const key = keys.find((k) => k.id === opts.id || (k.name !== null && k.name === opts.id));
  if (!key) throw new CliError(`API key "${opts.id}" not found`, undefined, 'see your keys with `docsearch keys list`');
  await confirmDestructive(ctx.io, `Revoke API key ${key.name ?? key.id} (${maskedKey(key)})? Anything using it stops working.`, opts.yes, 'revoke');
  await http.delete(`/api/v1/keys/${encodeURIComponent(key.id)}`);
  if (opts.json) return emitJson(ctx, { revoked: key.id });
  notice(ctx.io, `revoked API key ${key.id} (${maskedKey(key)})`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('revoke', {
    summary: 'revoke an API key',
    description: 'Revoke an API key; it stops working at once. Asks first on a terminal; elsewhere --yes is required.',
    examples: ['docsearch keys revoke key_0m1abc2de3FgHiJkLmNoPq', 'docsearch keys revoke ci --yes'],
  })
    .argument('<key>', 'key id (or its name)')
    .option('-y, --yes', 'do not ask for confirmation')
    .action((id: string, flags: { yes?: boolean }) => runF({ id, yes: Boolean(flags.yes), json: Boolean(ctx.globals().json) }, ctx));
}
