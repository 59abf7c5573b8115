import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { type EventChannel, type Events, LocalEvents } from '../coordination.js';
import type { DatabaseLog } from './database.js';

/** PostgreSQL channel of each event channel (NOTIFY reaches the sessions of one database only). */
const CHANNELS: Record<EventChannel, string> = {
  jobs: 'docsearch_jobs',
  document_settled: 'docsearch_document_settled',
  index_changed: 'docsearch_index_changed',
  sources: 'docsearch_sources',
  mail: 'docsearch_mail',
};
const BY_NAME = new Map(Object.entries(CHANNELS).map(([channel, name]) => [name, channel as EventChannel]));

/**
 * Events between processes on one PostgreSQL database: NOTIFY to publish (through the query pool), LISTEN on one
 * dedicated connection per process, which reconnects with backoff and listens again when PostgreSQL comes back.
 * This process's own subscribers are called at once, without the round trip; the notification that returns to it
 * is recognised by its origin tag and skipped, so each subscriber hears an event once.
 *
 * Whatever is published while the listening connection is down cannot be replayed (NOTIFY keeps nothing), so on
 * every (re)connection each subscriber is called once with an empty payload: look again, something may have
 * happened (see Events.subscribe).
 */
export class PgEvents implements Events {
  private readonly local = new LocalEvents();
  private readonly origin = randomBytes(8).toString('hex');
  private client: pg.Client | undefined;
  private connecting = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly newClient: () => pg.Client,
    private readonly log?: DatabaseLog,
  ) {}

  async publish(channel: EventChannel, payload: string): Promise<void> {
    await this.local.publish(channel, payload);
    await this.pool.query('select pg_notify($1, $2)', [CHANNELS[channel], `${this.origin} ${payload}`]);
  }

  subscribe(channel: EventChannel, listener: (payload: string) => void): () => void {
    const unsubscribe = this.local.subscribe(channel, listener);
    this.listen();
    return unsubscribe;
  }

  /** Stops listening; later publishes still reach this process's subscribers and other processes. */
  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    client?.end().catch(() => undefined);
  }

  private listen(): void {
    if (this.closed || this.client || this.connecting || this.retryTimer) return;
    this.connecting = true;
    void this.connect().finally(() => (this.connecting = false));
  }

  private async connect(): Promise<void> {
    const client = this.newClient();
    client.on('notification', (msg) => this.deliver(msg));
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      for (const name of Object.values(CHANNELS)) await client.query(`LISTEN ${name}`);
    } catch (err) {
      client.end().catch(() => undefined);
      this.retry(err);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    if (this.failures > 0) this.log?.info({ event: 'events.listening' }, 'listening for PostgreSQL notifications again');
    this.failures = 0;
    for (const channel of Object.keys(CHANNELS) as EventChannel[]) void this.local.publish(channel, '');
  }

  private deliver(msg: pg.Notification): void {
    const channel = BY_NAME.get(msg.channel);
    const text = msg.payload ?? '';
    const space = text.indexOf(' ');
    if (!channel || space < 0 || text.slice(0, space) === this.origin) return;
    void this.local.publish(channel, text.slice(space + 1));
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.client !== client) return; // a failed attempt, or after close(): handled there
    this.client = undefined;
    client.end().catch(() => undefined);
    this.retry(err ?? new Error('the connection ended'));
  }

  private retry(err: unknown): void {
    if (this.closed) return;
    if (this.failures === 0) {
      this.log?.warn({ event: 'events.connection_lost', error: (err as Error)?.message }, 'not listening for PostgreSQL notifications; reconnecting');
    }
    const delay = Math.min(10_000, 250 * 2 ** this.failures++);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.listen();
    }, delay);
    this.retryTimer.unref();
  }
}
