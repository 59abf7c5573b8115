import type { Command } from 'commander';
import { type Context, createContext } from '../context.js';
import { addGlobalOptions } from './global-options.js';
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
  addGlobalOptions(program, io);
  const ctx = createContext(io, program, overrides);
  const commands = [login.build(ctx), logout.build(ctx), whoami.build(ctx), authCommand(ctx), upload.build(ctx), search.build(ctx), savedSearchesCommand(ctx), projectsCommand(ctx), documentsCommand(ctx), sourcesCommand(ctx), trashCommand(ctx), keysCommand(ctx), adminCommand(ctx), mcp.build(ctx), completion.build(ctx)];
  for (const c of commands) program.addCommand(c);
  return ctx;
}
