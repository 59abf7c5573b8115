import { UsageError } from './terminal/errors.js';
import { type IO, processIO } from './terminal/io.js';
import { OPERATOR_SUMMARIES } from './cli/operator-commands.js';
import { listedOperator, type OperatorCommand, runProgram } from './cli/program.js';

/**
 * The composition root of the docsearch-cli package (scripts/pack-cli.mjs bundles it): the client commands only.
 * It imports nothing of server/, so the bundle carries none of the server's dependencies. Operator commands are
 * still listed, and answer that they need the full package.
 */
const OPERATORS: readonly OperatorCommand[] = Object.entries(OPERATOR_SUMMARIES).map(([name, summary]) => ({
  name,
  summary,
  load: async () =>
    listedOperator({ name, summary }).action(() => {
      throw new UsageError(
        `\`docsearch ${name}\` is an operator command: it needs the full docsearch package (this is docsearch-cli, the client only)`,
        'install the server with `npm install -g docsearch` on the machine that keeps the library',
      );
    }),
}));

/** Returns the exit code; bin/docsearch (the same launcher as the full package's) sets it. */
export function main(argv: string[], io: IO = processIO()): Promise<number> {
  return runProgram(argv, io, { operators: OPERATORS });
}
