/**
 * A part whose temp file cannot be written is never accepted (issue #12, found by the soak's disk-full probe: a
 * small upload on a full disk answered 202 and its original was stored empty). The write goes to /dev/full, a real
 * device on which every write fails with ENOSPC exactly as on a full disk, so the race is the one a full disk runs:
 * the whole body arrives in one read, busboy ends the part before the file is open, and the failed write reports
 * to `end()`'s callback before the stream's 'error' event.
 */
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { FileStore } from '../../src/store/objects/originals.js';
import { receiveMultipart } from '../../src/server/api/documents/multipart.js';
import { LocalObjectStore } from '../../src/store/objects/local.js';
import { missingFile } from '../helpers/requirement.js';

class FullDiskStore extends FileStore {
  override tempFile() {
    return { path: join(this.tmpDir, 'never-written.part'), stream: createWriteStream('/dev/full') };
  }
}

describe.skipIf(missingFile('/dev/full', 'a Linux device node') !== null)('receiving a part the disk cannot hold', () => {
  const root = mkdtempSync(join(tmpdir(), 'docsearch-multipart-'));
  const outcomes: (string | number)[] = [];
  let server: Server;

  beforeAll(async () => {
    const files = new FullDiskStore(new LocalObjectStore(root), join(root, 'tmp'));
    server = createServer((req, res) => {
      receiveMultipart(req, files, { maxFileBytes: 1 << 20, maxFiles: 4, fields: [] }).then(
        (r) => {
          outcomes.push(`accepted ${r.files.length}`);
          res.end();
        },
        (err: unknown) => {
          outcomes.push(err instanceof AppError ? err.code : String(err));
          res.end();
        },
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });

  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(root, { recursive: true, force: true });
  });

  it('answers insufficient_storage, never a received part, when the body arrives in one piece', async () => {
    const { port } = server.address() as AddressInfo;
    const boundary = 'b0undary';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nsome text to store\r\n--${boundary}--\r\n`;
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(
            `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
          );
        });
        socket.on('data', () => undefined);
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
    }
    expect(outcomes).toEqual(Array.from({ length: 5 }, () => 'insufficient_storage'));
  });
});
