import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import type { WebClient } from '../server/web-client.js';
import { loggedIn, uploadAs } from './library-client.js';

/**
 * A folder uploaded from the project page whose file's path the REST upload would refuse (past the 2,048 UTF-8 bytes
 * the path index holds: src/core/storable-text.ts) is refused alike, naming the file and why; the folder's other
 * files are uploaded with their paths. It was kept as a document without a path.
 */

/** 10 folders of 70 three-byte characters: 722 characters (under the 1,024 limit), 2,122 bytes (over 2,048). */
const LONG = `trip/${'山'.repeat(70).concat('/').repeat(10)}far.txt`;
const WHY = 'its path in the folder must be at most 2048 bytes in UTF-8 (it is 2122; a character outside ASCII takes 2 to 4)';

describe('web folder upload: a path too long for the path index', () => {
  let d: Daemon;
  let alice: TestUser;
  let web: WebClient;
  let project: string;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
    web = await loggedIn(d, alice);
    project = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Long paths' } })).body.id;
  });

  const documents = async () =>
    (await api(d, `/api/v1/documents?project_id=${project}`, { token: alice.apiKey })).body.documents.map((x: { filename: string; path: string | null }) => [x.filename, x.path]);

  it('without script: the file is left out and named with the reason, the others are uploaded with their paths', async () => {
    await web.get(`/projects/${project}`);
    const up = await uploadAs(
      web,
      project,
      [
        { name: 'trip/ok.txt', body: 'A short path: the ferry left at dawn.\n' },
        { name: LONG, body: 'A long path: the far shore.\n' },
      ],
      { via: 'field', accept: 'text/html' },
    );
    expect(up.status).toBe(303);
    const page = (await web.get(`/projects/${project}`)).text;
    expect(page).toContain(`Uploaded 1 file; it is being indexed. Not uploaded: &quot;far.txt&quot;: ${WHY}.`);
    expect(await documents()).toEqual([['ok.txt', 'trip/ok.txt']]);
  });

  it("the page's script (one file, JSON): a 400 with the reason, as the REST upload's naming paths[0]", async () => {
    await web.get(`/projects/${project}`);
    const up = await uploadAs(web, project, [{ name: LONG, body: 'The far shore again.\n' }]);
    expect(up.status).toBe(400);
    expect(up.body.error.message).toBe(`"far.txt": ${WHY}`);
    const form = new FormData();
    form.append('project_id', project);
    form.append('paths', JSON.stringify([LONG]));
    form.append('file', new Blob(['The far shore by the API.\n']), 'far.txt');
    const rest = await fetch(`${d.url}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${alice.apiKey}` }, body: form });
    expect(rest.status).toBe(400);
    expect(((await rest.json()) as { error: { message: string } }).error.message).toMatch(/^paths\[0\]: must be at most 2048 bytes in UTF-8 \(it is 2122;/);
    expect(await documents()).toEqual([['ok.txt', 'trip/ok.txt']]);
  });
});
