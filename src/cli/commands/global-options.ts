import { type Command, Option } from 'commander';
import { DEFAULT_SERVER } from '../default-server.js';
import { loadColumns } from '../output/columns.js';
import type { IO } from '../../terminal/io.js';

/**
 * The program's global options (--server, --token, --json, --jq), which client and operator commands alike read, and
 * the hook that applies them before a command runs. Apart from the client commands, whose modules an operator
 * command does not load (cli/program.ts).
 */
export function addGlobalOptions(program: Command, io: IO): void {
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
}
