import type Router from '@koa/router';
import { rm } from 'node:fs/promises';
import { invalidRequest, isAppError } from '../../core/errors.js';
import type { AcceptedDocument, ReceivedFile } from '../../documents/lifecycle.js';
import { isQuotaExceeded } from '../../documents/quotas.js';
import { plural, sentence } from '../../web/format.js';
import { legacyOffice, receiveMultipart } from '../api/documents/multipart.js';
import { parsePaths, pathProblem } from '../api/documents/paths.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { checkCsrf } from './csrf.js';
import { flash } from './flash.js';
import { requireUser, stillSignedIn } from './session.js';

/**
 * Uploads into a project from its page. The page's script sends one file per request with the CSRF token in
 * X-CSRF-Token (and a folder's files with their `paths`), and gets JSON; without script the form posts every
 * chosen file with its `_csrf` field, and gets the project page back with what was taken and what was not:
 * a file of the wrong type is named and left out, the others are kept. A browser posting a folder sends each
 * file's path inside it as its name, which becomes the document's path (one the API would refuse, past 2,048 bytes…,
 * is refused by the file's name). The body goes through the API's
 * multipart reader, so limits and error messages match.
 */
export function uploadRoutes(router: Router<AppState>, s: Services): void {
  router.post('project.upload', '/projects/:id/upload', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const header = ctx.get('x-csrf-token');
    if (header) checkCsrf(ctx, s, header);
    const projectId = await s.access.uploadTarget(user.actor, ctx.params.id!);
    const script = ctx.accepts('html', 'json') === 'json';
    const back = `/projects/${projectId}`;
    let received;
    try {
      received = await receiveMultipart(ctx.req, s.files, {
        maxFileBytes: s.config.maxUploadMb * 1024 * 1024,
        maxFiles: s.config.maxFiles,
        idleMs: s.config.uploadIdleTimeout * 1000,
        fields: ['_csrf', 'paths'],
        partial: !script,
        legacyOffice: legacyOffice(s),
        // The form's token field precedes its file inputs: a request without a good one is refused before any file
        // is received, not after the whole upload.
        ...(header ? {} : { beforeFiles: (fields: Readonly<Record<string, string>>) => void checkCsrf(ctx, s, fields._csrf ?? '') }),
      });
    } catch (err) {
      // The bare form gets its project page back with the reason, when the whole body was read (else the
      // error handler answers and closes the connection). A refused token is a 403 either way.
      if (script || !isAppError(err) || err.status >= 500 || err.code === 'forbidden' || !ctx.req.complete) throw err;
      // The form posted with nothing chosen in either picker: say what to do, not what the API expects.
      const why = err.message.startsWith('no file:') ? 'choose one or more files or a folder first.' : sentence(err.message);
      flash(ctx, `Nothing was uploaded: ${why}`, 'error');
      ctx.status = 303;
      return ctx.redirect(back);
    }
    const temps = received.files.map((f) => f.tempPath);
    try {
      if (!header) checkCsrf(ctx, s, received.fields._csrf ?? '');
      // The body can take minutes to arrive: a session ended, an account disabled or a share removed meanwhile
      // stores nothing (as the API's upload asks its credential and its project again).
      const still = await stillSignedIn(ctx, s);
      if (!still) return;
      await s.access.uploadTarget(still.actor, projectId);
      const paths = received.fields.paths !== undefined ? parsePaths(received.fields.paths, received.files.length) : received.files.map((f) => f.relativePath ?? null);
      // A folder's file whose path the API would refuse (too long for the path index…) is refused alike, by name:
      // the script's request fails with it, the form leaves it out and says why. Not kept without its path.
      const refused = [...received.refused];
      const files: ReceivedFile[] = [];
      for (const [i, f] of received.files.entries()) {
        const problem = paths[i] ? pathProblem(paths[i]) : undefined;
        const message = `"${f.filename}": its path in the folder ${problem}`;
        if (!problem) files.push({ ...f, path: paths[i] ?? null });
        else if (script) throw invalidRequest(message);
        else {
          refused.push({ filename: f.filename, message });
          await rm(f.tempPath, { force: true });
        }
      }
      let accepted: AcceptedDocument[];
      try {
        accepted = await s.ingest.accept(user.id, projectId, files, {});
      } catch (err) {
        // Past a quota (a 507): the form's page says which, as it says any other refusal.
        if (script || !isQuotaExceeded(err)) throw err;
        flash(ctx, `Nothing was uploaded: ${sentence(err.message)}`, 'error');
        ctx.status = 303;
        return ctx.redirect(back);
      }
      temps.length = 0;
      if (script) {
        ctx.status = 202;
        ctx.body = { documents: accepted.map((a) => ({ id: a.document.id, filename: a.document.filename, duplicate: a.duplicate })) };
        return;
      }
      const fresh = accepted.filter((a) => !a.duplicate).length;
      const parts = [
        fresh > 0 ? `Uploaded ${plural(fresh, 'file')}; ${fresh === 1 ? 'it is' : 'they are'} being indexed.` : '',
        accepted.length > fresh ? `${accepted.length - fresh} already in this project.` : '',
        refused.length > 0 ? `Not uploaded: ${refused.map((r) => r.message).join('; ')}.` : '',
      ];
      flash(ctx, parts.filter((p) => p).join(' '), refused.length > 0 ? 'error' : 'notice');
      ctx.status = 303;
      ctx.redirect(back);
    } finally {
      await Promise.all(temps.map((p) => rm(p, { force: true })));
    }
  });
}
