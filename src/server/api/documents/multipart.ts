/**
 * Streams a multipart/form-data upload to the file store's temp folder: each `file` part is hashed (sha256),
 * counted and its head kept for type sniffing while it is written, so nothing is buffered in memory. The
 * per-file cap is enforced as the bytes arrive, and a declared Content-Length no upload could fit is refused
 * before any byte is read (413). On any error every temp file of the request is removed.
 */
import { createHash } from 'node:crypto';
import type { WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { basename } from 'node:path';
import busboy from 'busboy';
import { insufficientStorage, isDiskFull } from '../../../core/disk-full.js';
import { AppError, invalidRequest } from '../../../core/errors.js';
import { fitFilename } from '../../../core/name-limits.js';
import { unstorableProblem } from '../../../core/storable-text.js';
import { nameTextProblem } from '../../../core/unsafe-text.js';
import type { FileStore } from '../../../store/objects/originals.js';
import type { Services } from '../../services.js';
import { fileType, type LegacyOffice } from '../../../ingest/file-type.js';
import { SNIFF_BYTES } from '../../../ingest/sniff.js';
import type { DocumentType } from '../../../ingest/types.js';

export interface ReceivedPart {
  tempPath: string;
  filename: string;
  contentType: DocumentType;
  sizeBytes: number;
  sha256: string;
  /**
   * The name as sent, when it holds a `/` (a browser posting a folder sends "folder/sub/file.txt"): unchecked, so a
   * path that cannot be a document's (paths.ts, pathProblem) is refused by its reader, not taken as no path.
   */
  relativePath?: string;
}

export interface Received {
  files: ReceivedPart[];
  fields: Record<string, string>;
  /** Files of a `partial` read refused for their type, with the reason in words, in arrival order. */
  refused: { filename: string; message: string }[];
}

export interface ReceiveLimits {
  maxFileBytes: number;
  maxFiles: number;
  /** Form fields accepted besides `file`. */
  fields: readonly string[];
  /**
   * A file of a type that can't be indexed is left out and named in `refused` instead of refusing the whole
   * request (the bare upload form: keep the good files, say which were not taken). The API refuses (415).
   */
  partial?: boolean;
  /** Legacy .doc, .xls and .ppt are taken (LibreOffice converts them); otherwise refused with what to install. */
  legacyOffice?: LegacyOffice;
  /**
   * Called with the fields read so far when the first file part begins (or with all of them, once read, when the
   * body holds none); what it throws ends the read there (no file is written, the rest of the body is not waited
   * for). The web form's CSRF check: its token field comes first.
   */
  beforeFiles?: (fields: Readonly<Record<string, string>>) => void;
  /**
   * An upload that sends nothing for this long is ended: a stalled client must not hold a socket for the whole
   * request timeout (--upload-idle-timeout; 30 s unless told).
   */
  idleMs?: number;
}

/** Whether this server takes legacy Office files, for ReceiveLimits. */
export const legacyOffice = (s: Pick<Services, 'config' | 'libreOffice'>): LegacyOffice =>
  s.libreOffice ? 'converted' : s.config.libreoffice === 'off' ? 'off' : 'not installed';

const MAX_FIELD_BYTES = 64 * 1024;

/** Room for part headers and the boundaries around the parts a request may carry. */
const PART_OVERHEAD_BYTES = 16 * 1024;

/** The most bytes an acceptable upload request can hold: larger declared bodies are refused before reading. */
/** How long the rest of a body may take to arrive before a full disk is answered anyway. */
const DISK_FULL_DRAIN_MS = 2000;

export const maxRequestBytes = (limits: ReceiveLimits): number =>
  limits.maxFiles * (limits.maxFileBytes + PART_OVERHEAD_BYTES) + limits.fields.length * (MAX_FIELD_BYTES + PART_OVERHEAD_BYTES);

/**
 * A name safe to show and store: no path, no control characters, no longer than a rename takes (name-limits.ts), in NFC
 * (macOS file names come decomposed, "e" + U+0301, and would not match the same name typed elsewhere). Browsers
 * write a file name's `"` as %22 and its line breaks as %0D and %0A in a form's multipart body (WHATWG HTML, "multipart/
 * form-data encoding algorithm"): read back, so `Report "final".txt` is stored as such.
 */
export function cleanFilename(raw: string | undefined, index: number): string {
  const unescaped = (raw ?? '').replace(/%22/gi, '"').replace(/%0[ad]/gi, '');
  // eslint-disable-next-line no-control-regex
  const name = basename(unescaped.replaceAll('\\', '/')).replace(/[\u0000-\u001f\u007f]/g, '').trim().normalize('NFC');
  // `.` and `..` name no file (and would be a path segment of an e-mail's attachments).
  if (!name || name === '.' || name === '..') return `upload-${index + 1}`;
  return fitFilename(name);
}

const fieldRefused = (path: string, message: string): AppError => invalidRequest(message, [{ path, message }]);

const mib = (bytes: number): string => `${Math.round((bytes / 1048576) * 10) / 10} MiB`;

const malformed = (err: Error) => invalidRequest(`malformed multipart body: ${err.message}`);

/**
 * Counts the parts of a multipart body as busboy delimits them: each `\r\n--<boundary>` (the first one without its
 * CRLF) up to the closing `--`. busboy drops a part without an event when it cannot read its Content-Disposition
 * (none, not `form-data`, a `filename*` in a charset it does not know), and what follows a delimiter not followed by
 * CRLF (`--<boundary> ` padded, or the boundary inside a file's bytes, which ends that file there): counted here,
 * such a part fails the request instead of being answered 202 without it, or with a file cut short.
 */
function partCounter(contentType: string): { push: (chunk: Buffer) => void; parts: () => number } {
  const m = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) return { push: () => undefined, parts: () => 0 };
  const needle = Buffer.from(`\r\n--${boundary}`);
  const n = needle.length;
  let pending: Buffer = Buffer.from('\r\n');
  let parts = 0;
  let closed = false;
  return {
    push(chunk) {
      if (closed) return;
      const buf = Buffer.concat([pending, chunk]);
      let from = 0;
      for (;;) {
        const i = buf.indexOf(needle, from);
        if (i < 0) break;
        if (i + n + 2 > buf.length) {
          // What follows the delimiter (a new part's CRLF, the closing "--") is in the next chunk.
          pending = buf.subarray(i);
          return;
        }
        if (buf[i + n] === 0x2d && buf[i + n + 1] === 0x2d) {
          closed = true;
          return;
        }
        parts += 1;
        from = i + n;
      }
      pending = Buffer.from(buf.subarray(Math.max(from, buf.length - (n - 1))));
    },
    parts: () => parts,
  };
}

/**
 * Reads the form. The first fatal problem (a malformed body, a file over the limit, a client that went away, a
 * failed write) ends the read at once: the rest of the body is not read, and the error answer closes the
 * connection (see the error handler). Temp files of the request are removed once their streams have closed.
 */
export async function receiveMultipart(req: IncomingMessage, files: FileStore, limits: ReceiveLimits): Promise<Received> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) {
    throw new AppError('unsupported_media_type', 'request body must be multipart/form-data with one or more "file" parts');
  }
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity') throw new AppError('unsupported_media_type', `uploads must not be sent with a Content-Encoding (got ${encoding})`);
  const declared = Number(req.headers['content-length'] ?? NaN);
  const most = maxRequestBytes(limits);
  if (declared > most) {
    throw new AppError(
      'payload_too_large',
      `the request body (${mib(declared)}) is larger than an upload can be (at most ${limits.maxFiles} files of ${mib(limits.maxFileBytes)} each)`,
    );
  }
  await files.init();
  // One slot per file part in arrival order; a slot stays empty when its part was refused.
  const slots: ((ReceivedPart & { head: Buffer }) | undefined)[] = [];
  const temps: string[] = [];
  const outs: WriteStream[] = [];
  const fields: Record<string, string> = {};
  const delimited = partCounter(type);
  // Parts busboy reported (a file or a field): fewer than the body delimits means it dropped one unread.
  let reported = 0;
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
          preservePath: true, // a folder's path inside it (cleanFilename keeps the name; the web upload keeps the path)
          // busboy cuts a file off when it reaches fileSize: one byte more, so a file of exactly the limit is taken.
          limits: { fileSize: limits.maxFileBytes + 1, files: limits.maxFiles, fields: limits.fields.length * 2, fieldSize: MAX_FIELD_BYTES },
        });
      } catch (err) {
        reject(malformed(err as Error));
        return;
      }
      let ended = false;
      const abort = (err: unknown) => {
        if (ended) return;
        ended = true;
        req.unpipe(bb);
        req.resume(); // discard what still arrives until the connection closes
        reject(err);
      };
      const writes: Promise<void>[] = [];

      bb.on('file', (name, stream, info) => {
        reported += 1;
        const index = slots.length;
        slots.push(undefined);
        if (index === 0 && limits.beforeFiles && !ended) {
          try {
            limits.beforeFiles(fields);
          } catch (err) {
            stream.resume();
            abort(err);
            return;
          }
        }
        // busboy ends a part cut off by the end of the body with an error on its stream ("Unexpected end of file").
        stream.on('error', (err: Error) => abort(malformed(err)));
        const filename = cleanFilename(info.filename, index);
        // A name that could display as another is refused, not cleaned: the sender learns which character.
        const unsafe = nameTextProblem(info.filename ?? '');
        if (unsafe) fail(invalidRequest(`file ${index + 1} ("${filename}"): its filename ${unsafe}`));
        if (ended) {
          stream.resume(); // parts busboy had buffered when the read ended: no temp file for them
          return;
        }
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
        outs.push(out);
        let writeFailed = false;
        const onWriteError = (err: Error) => {
          if (writeFailed) return;
          writeFailed = true;
          if (!isDiskFull(err)) return abort(err);
          // The rest of the body is let in first (bounded), so the 507 reaches the client instead of being lost
          // to a connection reset over unread bytes.
          stream.unpipe(out);
          stream.resume();
          const answer = () => abort(insufficientStorage(err));
          if (req.complete) return answer();
          const timer = setTimeout(answer, DISK_FULL_DRAIN_MS);
          req.once('end', () => {
            clearTimeout(timer);
            answer();
          });
        };
        out.on('error', onWriteError);
        const hash = createHash('sha256');
        const headParts: Buffer[] = [];
        let headBytes = 0;
        let size = 0;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          hash.update(chunk);
          if (headBytes < SNIFF_BYTES) {
            headParts.push(chunk.subarray(0, SNIFF_BYTES - headBytes));
            headBytes += Math.min(chunk.length, SNIFF_BYTES - headBytes);
          }
        });
        stream.on('limit', () => abort(new AppError('payload_too_large', `"${filename}" is larger than the ${mib(limits.maxFileBytes)} limit per file`)));
        writes.push(
          new Promise<void>((done) => {
            stream.on('end', () => {
              if (ended) return;
              out.end((err?: Error | null) => {
                // A failed write reaches this callback before the stream's 'error' event: the part was not stored,
                // and the request must not go on to accept it.
                if (err) return onWriteError(err);
                // An empty file input in a browser's form (a folder picker left alone) is a part with no name and
                // no bytes: nothing was chosen there, so nothing is received.
                if (!info.filename && size === 0) {
                  void rm(path, { force: true });
                  return done();
                }
                slots[index] = {
                  tempPath: path,
                  filename,
                  contentType: 'text/plain',
                  sizeBytes: size,
                  sha256: hash.digest('hex'),
                  head: Buffer.concat(headParts),
                  ...(info.filename?.includes('/') ? { relativePath: info.filename } : {}),
                };
                done();
              });
            });
          }),
        );
        stream.pipe(out, { end: false });
      });
      bb.on('field', (name, value, info) => {
        reported += 1;
        // Raw, as sent (a NUL in `project_id`); JSON fields are checked again once parsed, for their escaped ones.
        const unstorable = unstorableProblem(value);
        if (name === 'file') fail(invalidRequest('a "file" part has an empty or missing filename: send filename="<name>" in its Content-Disposition'));
        else if (!limits.fields.includes(name)) fail(invalidRequest(`unknown form field "${name}" (expected: file, ${limits.fields.join(', ')})`));
        // A known field's refusal names it in `details` too, as a JSON body's does.
        else if (info.valueTruncated) fail(fieldRefused(name, `form field "${name}" is longer than ${MAX_FIELD_BYTES} bytes`));
        else if (name in fields) fail(fieldRefused(name, `form field "${name}" is given more than once`));
        else if (unstorable) fail(fieldRefused(name, `${name}: ${unstorable}`));
        else fields[name] = value;
      });
      bb.on('filesLimit', () => fail(invalidRequest(`at most ${limits.maxFiles} files per upload`)));
      bb.on('fieldsLimit', () => fail(invalidRequest('too many form fields')));
      bb.on('error', (err: Error) => abort(malformed(err)));
      bb.on('close', () => {
        if (delimited.parts() > reported) {
          fail(
            invalidRequest(
              'a part of the form cannot be read (its Content-Disposition must be form-data with a name, a filename* in UTF-8 or ISO-8859-1, and its boundary line the boundary alone): nothing was kept',
            ),
          );
        }
        void Promise.all(writes).then(() => {
          if (!ended) {
            ended = true;
            resolve();
          }
        });
      });
      const idleMs = limits.idleMs ?? 30_000;
      req.setTimeout(idleMs, () => abort(invalidRequest(`the upload stalled: no data arrived for ${idleMs / 1000} s`)));
      req.on('error', () => abort(invalidRequest('the upload was interrupted')));
      req.on('aborted', () => abort(invalidRequest('the upload was interrupted')));
      // A client gone before the handler got here (after `100 Continue`, say) fired those events already: nothing
      // more will come, and waiting would hold the handler, and a daemon's shutdown, for good.
      if (req.destroyed && !req.complete) abort(invalidRequest('the upload was interrupted'));
      else {
        req.on('data', delimited.push);
        req.pipe(bb);
      }
    });
    req.setTimeout(0); // the body is in: a ?wait=true answer may take minutes
    if (failure) throw failure;
    if (slots.length === 0) limits.beforeFiles?.(fields);
    const received = slots.filter((r) => r !== undefined);
    if (received.length === 0) throw invalidRequest('no file: send one or more files in multipart field "file"');

    const out: ReceivedPart[] = [];
    const refused: Received['refused'] = [];
    for (const r of received) {
      const decided = await fileType(r, limits.legacyOffice);
      if ('refused' in decided) {
        if (!limits.partial) throw new AppError('unsupported_media_type', decided.refused);
        refused.push({ filename: r.filename, message: decided.refused });
        await rm(r.tempPath, { force: true });
        continue;
      }
      const sniffed = decided.type;
      out.push({ tempPath: r.tempPath, filename: r.filename, contentType: sniffed, sizeBytes: r.sizeBytes, sha256: r.sha256, ...(r.relativePath ? { relativePath: r.relativePath } : {}) });
    }
    return { files: out, fields, refused };
  } catch (err) {
    req.setTimeout(0);
    // A stream still opening would recreate its file after the rm: close every one first.
    await Promise.all(outs.map((o) => (o.closed ? undefined : new Promise<void>((r) => o.once('close', () => r()).destroy()))));
    await Promise.all(temps.map((p) => rm(p, { force: true })));
    throw err;
  }
}
