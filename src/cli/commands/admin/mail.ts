import type { Command } from 'commander';
import { OUTBOX_MAIL, type OutboxMail } from '../../api-types.js';
import type { Context } from '../../context.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { printTable } from '../../output/table.js';
import { shape } from '../../wire-shape.js';
import { addDefaultSubcommand, defineCommand } from '../shared/command.js';

const OUTBOX = shape<{ configured: boolean; counts: Record<string, number>; mail: OutboxMail[] }>({ mail: [OUTBOX_MAIL.fields], configured: 'boolean', counts: 'object' });
const RETRIED_MAIL = shape<{ queued: number }>({ queued: 'number' });

export function mailCommand(ctx: Context): Command {
  const group = defineCommand('mail', {
    summary: "the server's mail outbox: list, test, retry",
    examples: ['docsearch admin mail', 'docsearch admin mail --status failed', 'docsearch admin mail test'],
  });
  addDefaultSubcommand(
    group,
    defineCommand('list', { summary: 'what is queued (and why it waits), sent and given up', examples: ['docsearch admin mail list --status queued'] })
      .option('--status <status>', 'queued, sent or failed')
      .action(async (flags: { status?: string }) => {
        const res = await ctx.http().get(`/api/v1/admin/mail${flags.status ? `?status=${encodeURIComponent(flags.status)}` : ''}`, { shape: OUTBOX });
        if (ctx.globals().json) return emitJson(ctx, res);
        if (!res.configured) notice(ctx.io, 'this server sends no mail (no --smtp-url)');
        notice(ctx.io, `${res.counts.queued} queued, ${res.counts.sent} sent, ${res.counts.failed} failed`);
        printTable(ctx.io, {
          headers: ['STATUS', 'KIND', 'TO', 'ATTEMPTS', 'MADE', 'LAST ERROR'],
          rows: res.mail.map((m) => [m.status, m.kind, m.to, m.attempts, { time: m.created_at }, m.last_error]),
          now: ctx.now(),
        });
      }),
  );
  group.addCommand(
    defineCommand('test', { summary: 'queue a test mail to yourself (or --to)', examples: ['docsearch admin mail test', 'docsearch admin mail test --to ops@example.com'] })
      .option('--to <address>', 'where to send it (default: your own address)')
      .action(async (flags: { to?: string }) => {
        const mail = await ctx.http().post('/api/v1/admin/mail/test', flags.to ? { to: flags.to } : {}, { shape: OUTBOX_MAIL });
        if (ctx.globals().json) return emitJson(ctx, mail);
        notice(ctx.io, `queued a test mail to ${mail.to} (${mail.id}); see it arrive, or why not, with \`docsearch admin mail\``);
      }),
  );
  group.addCommand(
    defineCommand('retry', { summary: 'try every queued mail now (once the mail server is back)', examples: ['docsearch admin mail retry'] }).action(async () => {
      const res = await ctx.http().post('/api/v1/admin/mail/retry', undefined, { shape: RETRIED_MAIL });
      if (ctx.globals().json) return emitJson(ctx, res);
      notice(ctx.io, `trying ${res.queued} queued mail now`);
    }),
  );
  return group;
}
