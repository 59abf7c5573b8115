/**
 * A multipart upload whose body is held open: its fields and the file's first 100 bytes are sent, then — once the
 * daemon writes the file to its temp folder — `meanwhile` runs, then the rest. For what must hold when something
 * changes while an upload is still arriving (a key revoked, a session ended, a share removed). Raw HTTP: fetch
 * cannot pause a body.
 */
import { request } from 'node:http';
import type { Daemon } from './daemon.js';
import { waitFor } from './eventually.js';
import { storedFiles } from '../ingest/pipeline/helpers.js';

export function heldUpload(
  d: Daemon,
  path: string,
  headers: Record<string, string>,
  fields: Record<string, string>,
  file: { name: string; text: string },
  meanwhile: () => Promise<void>,
): Promise<{ status: number; body: string }> {
  const head =
    Object.entries(fields)
      .map(([name, value]) => `--B\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join('') + `--B\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: text/plain\r\n\r\n`;
  const tail = '\r\n--B--\r\n';
  const url = new URL(`${d.url}${path}`);
  return new Promise((resolve, reject) => {
    const req = request(
      { hostname: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...headers, 'content-type': 'multipart/form-data; boundary=B', 'content-length': Buffer.byteLength(head + file.text + tail) } },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.write(head + file.text.slice(0, 100));
    void waitFor(() => storedFiles(d.dataDir).temp.length > 0, 30_000, 'the upload streaming', { intervalMs: 20 })
      .then(meanwhile)
      .then(() => req.end(file.text.slice(100) + tail), reject);
  });
}
