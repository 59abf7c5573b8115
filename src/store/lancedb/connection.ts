import { access, constants, mkdir } from 'node:fs/promises';
import * as lancedb from '@lancedb/lancedb';

/**
 * The daemon's LanceDB connection. Only the daemon opens it (a single writer), and only this
 * folder imports @lancedb/lancedb.
 */
export class VectorStore {
  private closed = false;

  private constructor(
    readonly dir: string,
    readonly connection: lancedb.Connection,
  ) {}

  static async open(dir: string): Promise<VectorStore> {
    await mkdir(dir, { recursive: true });
    return new VectorStore(dir, await lancedb.connect(dir));
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Up when the directory is still there and writable and the connection answers. */
  async probe(): Promise<{ up: boolean; error?: string }> {
    if (this.closed) return { up: false, error: 'closed' };
    try {
      await access(this.dir, constants.W_OK);
      await this.connection.tableNames();
      return { up: true };
    } catch (err) {
      return { up: false, error: (err as Error).message };
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.connection.close();
  }
}
