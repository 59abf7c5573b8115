import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { LocalFile } from './collect-files.js';

export interface MultipartBody {
  contentType: string;
  contentLength: number;
  body: AsyncIterable<Uint8Array>;
}

/** RFC 7578 §4.2 / WHATWG form encoding: quotes and line breaks in a filename are percent-escaped. */
const escapeName = (s: string): string => s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

/**
 * A multipart/form-data body that streams each file from disk (never buffering a whole file) and
 * reports bytes sent per file. The length is known up front, so the server can refuse an
 * oversized request (413) before reading it.
 */
export function multipartBody(
  fields: Record<string, string>,
  files: LocalFile[],
  onProgress: (fileIndex: number, sent: number) => void,
): MultipartBody {
  const boundary = `----docsearch${randomBytes(12).toString('hex')}`;
  const enc = (s: string) => Buffer.from(s, 'utf8');
  const fieldParts = Object.entries(fields).map(([k, v]) => enc(`--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(k)}"\r\n\r\n${v}\r\n`));
  const fileHeads = files.map((f) =>
    enc(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${escapeName(f.name)}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
  );
  const crlf = enc('\r\n');
  const tail = enc(`--${boundary}--\r\n`);
  const contentLength =
    fieldParts.reduce((n, b) => n + b.length, 0) + fileHeads.reduce((n, b) => n + b.length, 0) + files.reduce((n, f) => n + f.size + crlf.length, 0) + tail.length;

  async function* generate(): AsyncGenerator<Uint8Array> {
    for (const part of fieldParts) yield part;
    for (let i = 0; i < files.length; i++) {
      yield fileHeads[i]!;
      let sent = 0;
      // Read exactly the size announced in Content-Length, even if the file grows meanwhile.
      const size = files[i]!.size;
      if (size > 0) {
        for await (const chunk of createReadStream(files[i]!.path, { start: 0, end: size - 1, highWaterMark: 256 * 1024 })) {
          sent += (chunk as Buffer).length;
          yield chunk as Buffer;
          onProgress(i, sent);
        }
      }
      if (sent !== size) throw new Error(`${files[i]!.path} changed size while uploading`);
      onProgress(i, size);
      yield crlf;
    }
    yield tail;
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, contentLength, body: generate() };
}
