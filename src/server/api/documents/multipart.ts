/**
 * Streams a multipart/form-data upload to the file store's temp folder: each `file` part is hashed (sha256),
 * counted and its head kept for type sniffing while it is written, so nothing is buffered in memory. The
 * per-file cap is enforced as the bytes arrive: the part's temp file is deleted at once and the request
 * answers 413. On any error every temp file of the request is removed.
 */
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { basename } from 'node:path';
import busboy from 'busboy';
import { insufficientStorage, isDiskFull } from '../../../core/disk-full.js';
import { AppError, invalidRequest } from '../../../core/errors.js';
import type { FileStore } from '../../../ingest/file-store.js';
import { OLE2_CFB, SNIFF_BYTES, sniffType } from '../../../ingest/sniff.js';
import type { DocumentType } from '../../../ingest/types.js';

export interface ReceivedPart {
  tempPath: string;
  filename: string;
  contentType: DocumentType;
  sizeBytes: number;
  sha256: string;
}

export interface Received {
  files: ReceivedPart[];
  fields: Record<string, string>;
}

export interface ReceiveLimits {
  maxFileBytes: number;
  maxFiles: number;
  /** Form fields accepted besides `file`. */
  fields: readonly string[];
}

const MAX_FIELD_BYTES = 64 * 1024;

/** A name safe to show and store: no path, no control characters, bounded length. */
export function cleanFilename(raw: string | undefined, index: number): string {
  // eslint-disable-next-line no-control-regex
  const name = basename((raw ?? '').replaceAll('\\', '/')).replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return (name || `upload-${index + 1}`).slice(0, 255);
}

const mib = (bytes: number): string => `${Math.round((bytes / 1048576) * 10) / 10} MiB`;

export async function receiveMultipart(req: IncomingMessage, files: FileStore, limits: ReceiveLimits): Promise<Received> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) {
    throw new AppError('unsupported_media_type', 'request body must be multipart/form-data with one or more "file" parts');
  }
  await files.init();
  // One slot per file part in arrival order; a slot stays empty when its part was refused.
  const slots: ((ReceivedPart & { head: Buffer }) | undefined)[] = [];
  const temps: string[] = [];
  const fields: Record<string, string> = {};
  let failure: AppError | undefined;
  const fail = (err: AppError) => {
    failure ??= err;
  };

  try {
    await new Promise<void>((resolve, reject) => {
      let bb: busboy.Busboy;
      try {
        bb = busboy({
          headers: req.headers,
          defParamCharset: 'utf8',
          limits: { fileSize: limits.maxFileBytes, files: limits.maxFiles, fields: limits.fields.length * 2, fieldSize: MAX_FIELD_BYTES },
        });
      } catch (err) {
        reject(invalidRequest(`malformed multipart body: ${(err as Error).message}`));
        return;
      }
      const writes: Promise<void>[] = [];

      bb.on('file', (name, stream, info) => {
        const index = slots.length;
        slots.push(undefined);
        const filename = cleanFilename(info.filename, index);
        if (name !== 'file') {
          fail(invalidRequest(`unknown form field "${name}": files go in "file"`));
          stream.resume();
          return;
        }
        if (failure) {
          stream.resume();
          return;
        }
        const { path, stream: out } = files.tempFile();
        temps.push(path);
        const hash = createHash('sha256');
        const headParts: Buffer[] = [];
        let headBytes = 0;
        let size = 0;
        let truncated = false;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          hash.update(chunk);
          if (headBytes < SNIFF_BYTES) {
            headParts.push(chunk.subarray(0, SNIFF_BYTES - headBytes));
            headBytes += Math.min(chunk.length, SNIFF_BYTES - headBytes);
          }
        });
        stream.on('limit', () => {
          truncated = true;
          fail(new AppError('payload_too_large', `"${filename}" is larger than the ${mib(limits.maxFileBytes)} limit per file`));
          stream.unpipe(out);
          out.destroy(); // the temp file is removed once the stream has closed (below)
          stream.resume(); // drain the rest without keeping it
        });
        writes.push(
          new Promise<void>((done, error) => {
            // Writes still queued when a part is cut off fail with ERR_STREAM_DESTROYED: expected, not an error.
            // A write that fails (a full disk) ends the part the same way: the rest is drained, the request
            // answers with the error, and nothing is left rejected behind the request's back.
            out.on('error', (err) => {
              if (truncated) return;
              truncated = true;
              fail(isDiskFull(err) ? insufficientStorage(err) : new AppError('internal_error', 'could not store the upload', { cause: err }));
              stream.unpipe(out);
              stream.resume();
            });
            out.on('close', () => {
              if (truncated) rm(path, { force: true }).then(() => done(), error);
              else done();
            });
            stream.on('end', () => {
              if (truncated) return;
              out.end(() => {
                slots[index] = {
                  tempPath: path,
                  filename,
                  contentType: 'text/plain',
                  sizeBytes: size,
                  sha256: hash.digest('hex'),
                  head: Buffer.concat(headParts),
                };
              });
            });
            stream.pipe(out, { end: false });
          }),
        );
      });
      bb.on('field', (name, value, info) => {
        if (!limits.fields.includes(name)) fail(invalidRequest(`unknown form field "${name}" (expected: file, ${limits.fields.join(', ')})`));
        else if (info.valueTruncated) fail(invalidRequest(`form field "${name}" is longer than ${MAX_FIELD_BYTES} bytes`));
        else if (name in fields) fail(invalidRequest(`form field "${name}" is given more than once`));
        else fields[name] = value;
      });
      bb.on('filesLimit', () => fail(invalidRequest(`at most ${limits.maxFiles} files per upload`)));
      bb.on('fieldsLimit', () => fail(invalidRequest('too many form fields')));
      bb.on('error', (err: Error) => reject(invalidRequest(`malformed multipart body: ${err.message}`)));
      bb.on('close', () => {
        Promise.all(writes).then(() => resolve(), reject);
      });
      req.on('aborted', () => reject(invalidRequest('the upload was interrupted')));
      req.pipe(bb);
    });
    if (failure) throw failure;
    const received = slots.filter((r) => r !== undefined);
    if (received.length === 0) throw invalidRequest('no file: send one or more files in multipart field "file"');

    const out: ReceivedPart[] = [];
    for (const r of received) {
      const sniffed = r.sizeBytes === 0 ? null : sniffType(r.head, r.filename);
      if (sniffed === OLE2_CFB) {
        throw new AppError('unsupported_media_type', `"${r.filename}" is an encrypted .docx or a legacy .doc — not supported (accepted: PDF, DOCX, TXT)`);
      }
      if (sniffed === null) {
        const why = r.sizeBytes === 0 ? 'is empty' : 'is not a PDF, DOCX or text file';
        throw new AppError('unsupported_media_type', `"${r.filename}" ${why} (accepted: PDF, DOCX, TXT)`);
      }
      out.push({ tempPath: r.tempPath, filename: r.filename, contentType: sniffed, sizeBytes: r.sizeBytes, sha256: r.sha256 });
    }
    return { files: out, fields };
  } catch (err) {
    await Promise.all(temps.map((p) => rm(p, { force: true })));
    throw err;
  }
}
