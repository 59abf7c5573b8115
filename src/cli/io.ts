import type { Readable, Writable } from 'node:stream';

/** All CLI output goes through here: data to stdout, notices, progress and prompts to stderr. */
export interface IO {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
}

export const processIO = (): IO => ({ stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env });

/** Prompts only where a person can answer: stdin and stderr are terminals and this is not CI. */
export const canPrompt = (io: IO): boolean => Boolean(io.stdin.isTTY && io.stderr.isTTY) && !io.env.CI;

/** Reads all of stdin as text (passwords and tokens piped in by scripts). */
export async function readStdin(io: IO): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}
