import { Command, Option } from 'commander';
import { colorEnabled, isStdoutTTY, type IO } from '../terminal/io.js';
import { ConfigError, optionHelp, resolveConfig } from '../server/config.js';
import { CliError } from '../terminal/errors.js';
import { NewerLibraryError } from '../core/newer-library.js';

/** `docsearch serve`: options come from the declarations in config.ts. */
export function serveCommand(io: IO, setExit: (code: Promise<number>) => void): Command {
  const cmd = new Command('serve')
    .summary('run the docsearch daemon (API, OAuth server, web pages, ingestion)')
    .description(
      'Run the docsearch daemon: the REST API under /api/v1, the OAuth 2.0 server, the web pages and the ingestion workers.\n' +
        'Each option can also come from its DOCSEARCH_* environment variable or a JSON config file, in that order of precedence.',
    )
    .option('--config <file>', 'JSON config file whose keys are the option names below (env DOCSEARCH_CONFIG; default $XDG_CONFIG_HOME/docsearch/config.json if present)');
  for (const o of optionHelp()) {
    const option = new Option(o.flag, `${o.description} [env ${o.env}]`);
    if (o.defaultText !== undefined) option.default(undefined, o.defaultText);
    cmd.addOption(option);
  }
  cmd.addHelpText(
    'after',
    `
Examples:
  $ docsearch serve                                  # 127.0.0.1:7411, data under ~/.local/share/docsearch
  $ docsearch serve --port 0 --data-dir /tmp/ds      # any free port; the address is printed
  $ DOCSEARCH_EMBEDDER=ollama:nomic-embed-text docsearch serve
`,
  );
  cmd.action(async (flags: Record<string, unknown>) => {
    let config;
    try {
      const { config: file, ...rest } = flags;
      config = resolveConfig(rest, io.env, file as string | undefined);
    } catch (err) {
      if (err instanceof ConfigError) throw new CliError(err.message, 2, 'see `docsearch serve --help`');
      throw err;
    }
    // Loaded once the configuration holds: a refused value answers without loading the server.
    const { startDaemon } = await import('../server/daemon.js');
    let daemon;
    try {
      // auto: text for a person at a terminal, JSON for whatever reads a pipe or a file (journald, containers).
      const text = config.logFormat === 'text' || (config.logFormat === 'auto' && isStdoutTTY(io));
      daemon = await startDaemon({ config, notices: io.stderr, logStyle: text ? { format: 'text', color: colorEnabled(io, 'stdout') } : { format: 'json' } });
    } catch (err) {
      if (err instanceof NewerLibraryError) throw err; // its own exit code (main.ts)
      throw new CliError(`could not start: ${(err as Error).message}`);
    }
    setExit(
      new Promise<number>((resolve) => {
        const stop = (signal: string) => {
          io.stderr.write(`received ${signal}, finishing in-flight requests…\n`);
          process.off('SIGINT', onInt);
          process.off('SIGTERM', onTerm);
          daemon.close().then(
            () => resolve(0),
            (err: unknown) => {
              io.stderr.write(`error during shutdown: ${(err as Error).message}\n`);
              resolve(1);
            },
          );
        };
        const onInt = () => stop('SIGINT');
        const onTerm = () => stop('SIGTERM');
        process.on('SIGINT', onInt);
        process.on('SIGTERM', onTerm);
      }),
    );
  });
  return cmd;
}
