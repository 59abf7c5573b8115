/**
 * docs/operations.md#behind-a-reverse-proxy: the proxy configuration the docs give passes what the daemon takes. A web
 * search of the longest query the search box takes, all emoji, has a request line of ~24 KB; HAProxy's default buffer
 * (16 KiB) answered it with its own 400, so docs/scale-out.md's configuration sets a larger one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_QUERY_CHARS } from '../../src/core/search-limits.js';
import { MAX_REQUEST_HEAD_BYTES } from '../../src/server/http-server.js';
import { addUser, type Daemon } from '../helpers/daemon.js';
import { haproxyMissing, type LoadBalancer, startHaproxy } from '../helpers/haproxy.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { loggedIn } from '../web/library-client.js';

const MISSING = haproxyMissing();

describe.skipIf(MISSING !== null)(`a search as long as the daemon takes, through the documented haproxy configuration${MISSING ? ` (skipped: ${MISSING})` : ''}`, () => {
  let d: Daemon;
  let lb: LoadBalancer;
  daemonForSuite(async (started) => {
    d = started;
  });
  beforeAll(async () => {
    lb = await startHaproxy([Number(new URL(d.url).port)]);
  });
  afterAll(async () => {
    await lb?.stop();
  });

  it(`answers a search page of ${MAX_QUERY_CHARS} emoji with the daemon's page, not the proxy's error`, async () => {
    const user = await addUser(d);
    const web = await loggedIn({ ...d, url: lb.url }, user);
    const query = '🎉'.repeat(MAX_QUERY_CHARS);
    const path = `/search?mode=keyword&q=${encodeURIComponent(query)}`;
    expect(path.length).toBeGreaterThan(16 * 1024);
    expect(path.length).toBeLessThan(MAX_REQUEST_HEAD_BYTES - 1024);
    const res = await web.get(path);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.text).toContain('name="q"');
  });
});
