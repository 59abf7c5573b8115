import type * as lancedb from '@lancedb/lancedb';

/** A string as a LanceDB SQL literal: filters are built from ids, so quotes are doubled, never interpolated raw. */
export const lit = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/**
 * A LanceDB table of rows owned by a user, project and document, written only by this process. Writes
 * (add/delete/optimize/rebuild) run one at a time: LanceDB commits are optimistic and we are its only writer.
 */
export abstract class OwnedRowsTable {
  protected table: lancedb.Table | undefined;
  private writing: Promise<unknown> = Promise.resolve();

  protected serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.writing.then(fn, fn);
    this.writing = run.catch(() => undefined);
    return run;
  }

  /** Folds new rows into the table's indexes and compacts. */
  optimize(): Promise<void> {
    return this.serial(async () => {
      if (this.table) await this.table.optimize();
    });
  }

  deleteDocument(documentId: string): Promise<void> {
    return this.deleteWhere(`document_id = ${lit(documentId)}`);
  }

  deleteProject(projectId: string): Promise<void> {
    return this.deleteWhere(`project_id = ${lit(projectId)}`);
  }

  private deleteWhere(predicate: string): Promise<void> {
    return this.serial(async () => {
      if (this.table) await this.table.delete(predicate);
    });
  }
}
