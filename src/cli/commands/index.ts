import { type Command, Option } from 'commander';
import { type Context, createContext, DEFAULT_SERVER } from '../context.js';
import { loadColumns } from '../output/columns.js';
import type { IO } from '../../terminal/io.js';
import { adminCommand } from './admin/index.js';
import { authCommand } from './auth/index.js';
import * as login from './auth/login.js';
import * as logout from './auth/logout.js';
import * as whoami from './auth/whoami.js';
import * as completion from './completion.js';
import { documentsCommand } from './documents/index.js';
import { keysCommand } from './keys/index.js';
import * as mcp from './mcp.js';
import { projectsCommand } from './projects/index.js';
import { savedSearchesCommand } from './saved-searches/index.js';
import * as search from './search.js';
import { sourcesCommand } from './sources/index.js';
import { trashCommand } from './trash/index.js';
import * as upload from './upload.js';

/**
 * Adds the global client options and the client commands (login … completion) to the program.
 * The Context is lazy: nothing here reads config, credentials or the network until a command runs.
 */
export function registerClientCommands(program: Command, io: IO, overrides: Partial<Context> = {}): Context {
  program
    .addOption(new Option('--server <url>', `server URL (env DOCSEARCH_URL; default: the server you logged in to, else ${DEFAULT_SERVER})`))
    .addOption(new Option('--token <token>', 'API key or access token to use instead of the stored login (env DOCSEARCH_TOKEN)'))
    .option('--json', 'JSON on stdout and no notices on stderr; `--json f1,f2` keeps those fields of each listed item')
    .addOption(new Option('--json-fields <fields>', 'the fields of `--json f1,f2`').hideHelp())
    .option('--jq <expr>', 'filter the JSON output with a jq expression (implies --json; strings print raw)')
    .hook('preAction', async (_program, action) => {
      const g = program.opts<{ json?: boolean; jq?: string }>();
      if (g.jq !== undefined) program.setOptionValue('json', true);
      if (g.json || g.jq !== undefined) io.quiet = true;
      // Shell completion answers every Tab and prints no table.
      if (action.name() !== 'completion') await loadColumns();
    });
  const ctx = createContext(io, program, overrides);
  const commands = [login.build(ctx), logout.build(ctx), whoami.build(ctx), authCommand(ctx), upload.build(ctx), search.build(ctx), savedSearchesCommand(ctx), projectsCommand(ctx), documentsCommand(ctx), sourcesCommand(ctx), trashCommand(ctx), keysCommand(ctx), adminCommand(ctx), mcp.build(ctx), completion.build(ctx)];
  for (const c of commands) program.addCommand(c);
  return ctx;
}
