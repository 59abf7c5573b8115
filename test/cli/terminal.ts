import { spawn } from 'node:child_process';
import { BIN } from '../helpers/daemon.js';

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The CLI on a real pseudo-terminal `cols` wide (util-linux `script`): what a person sees, stdout and stderr
 * together, line ends as "\n".
 */
export function onTerminal(cols: number, args: string[], env: Record<string, string>, cwd?: string): Promise<string> {
  const cmd = `stty cols ${cols} rows 60; ${[process.execPath, BIN, ...args].map(shellQuote).join(' ')}`;
  return new Promise((resolve, reject) => {
    const proc = spawn('script', ['-qec', cmd, '/dev/null'], { cwd, env: { ...process.env, ...env, COLUMNS: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    // Decoded across chunks: a character whose bytes two reads split is not two U+FFFD.
    proc.stdout.setEncoding('utf8').on('data', (b: string) => (out += b));
    proc.stderr.setEncoding('utf8').on('data', (b: string) => (out += b));
    proc.once('error', reject);
    proc.once('exit', () => resolve(out.replaceAll('\r\n', '\n')));
  });
}
