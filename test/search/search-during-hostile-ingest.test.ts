/**
 * Another user's searches stay served while hostile documents ingest on the same daemon: six documents of unbroken
 * runs of letters in six scripts (300 KB–1 MB each; the tokenizer reads each run as one unknown word, ICU segments
 * the kana and Thai). Ingest's main-thread work (chunking, tokenising for the model, answer units, keyword analysis)
 * held the event loop for seconds in one piece: giant chunks, and a slice's or a batch's texts all at once (now cut
 * to size by the chunker, and done a text at a time in turns: core/loop-turns.ts). Searches waited 5–13 s, the event
 * loop 3.7–8.5 s. Shown by the daemon's own event-loop delay histogram (prom-client's
 * `nodejs_eventloop_lag_max_seconds`: the longest delay since the last scrape) and each search's time, both under
 * wide bounds: quiet, a search takes ~10 ms.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser, waitPreloaded } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles, waitFor } from '../ingest/pipeline/helpers.js';

/** A seeded run of `n` letters drawn from `letters`: no space, no punctuation. */
function run(letters: string, n: number, seed: number): string {
  const set = [...letters];
  let out = '';
  for (let i = 0; i < n; i++) out += set[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % set.length];
  return out;
}

const HOSTILE: [string, string][] = [
  ['latin.txt', run('abcdefghijklmnopqrstuvwxyz', 1_000_000, 1)],
  ['arabic.txt', run('ابتثجحخدذرزسشصضطظعغفقكلمنهوي', 250_000, 2)],
  ['cyrillic.txt', run('абвгдежзийклмнопрстуфхцчшщыэюя', 300_000, 3)],
  ['kana.txt', run('あいうえおかきくけこさしすせそたちつてとなにぬねのアイウエオカキクケコ', 300_000, 4)],
  ['thai.txt', run('กขคงจฉชซญดตถทธนบปผพฟภมยรลวศสหอ', 300_000, 5)],
  ['hangul.txt', run('가나다라마바사아자차카타파하강남단람', 100_000, 6)],
];

/** The longest event-loop delay since the last scrape, in seconds. */
async function loopDelayMax(d: Daemon): Promise<number> {
  const text = await (await fetch(`${d.url}/metrics`)).text();
  const value = Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1]);
  expect(Number.isFinite(value), 'nodejs_eventloop_lag_max_seconds in /metrics').toBe(true);
  return value;
}

describe('searches while hostile documents ingest', () => {
  let d: Daemon;
  let owner: TestUser;
  let other: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      owner = await addUser(d);
      other = await addUser(d);
      const res = await uploadFiles(d, other.apiKey, [{ name: 'notes.txt', bytes: Buffer.from('The library opens at nine. Members borrow five books for two weeks.\n\nThe reading room is quiet.') }]);
      expect(res.status).toBe(202);
      await waitFor(async () => (await api(d, `/api/v1/documents/${res.body.documents[0].id}`, { token: other.apiKey })).body.status === 'ready', 120_000, 'notes ready');
      await waitPreloaded(d);
    },
    { setupTimeoutMs: 300_000 },
  );

  it("keeps another user's searches served: no piece of ingest holds the event loop for seconds", async () => {
    const search = async () => {
      const t0 = performance.now();
      const r = await api(d, '/api/v1/search', { token: other.apiKey, body: { query: 'when does the library open', limit: 5 } });
      expect(r.status).toBe(200);
      expect(r.body.results[0].document.filename).toBe('notes.txt');
      return performance.now() - t0;
    };
    for (let i = 0; i < 5; i++) await search();
    await loopDelayMax(d); // from here on
    const up = await uploadFiles(d, owner.apiKey, HOSTILE.map(([name, text]) => ({ name, bytes: Buffer.from(text) })));
    expect(up.status).toBe(202);
    const times: number[] = [];
    let delay = 0;
    for (let done = false; !done; ) {
      times.push(await search());
      if (times.length % 10 === 0) {
        delay = Math.max(delay, await loopDelayMax(d));
        const docs = (await api(d, '/api/v1/documents?limit=100', { token: owner.apiKey })).body.documents as { status: string }[];
        done = docs.every((x) => x.status === 'ready' || x.status === 'failed');
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    delay = Math.max(delay, await loopDelayMax(d));
    const docs = (await api(d, '/api/v1/documents?limit=100', { token: owner.apiKey })).body.documents as { filename: string; status: string }[];
    expect(docs.map((x) => [x.filename, x.status]).sort()).toEqual(HOSTILE.map(([name]) => [name, 'ready']).sort());
    const sorted = [...times].sort((a, b) => a - b);
    const figures = JSON.stringify({ searches: times.length, p50: Math.round(sorted[Math.floor(sorted.length / 2)]!), max: Math.round(sorted.at(-1)!), loopDelayMax: delay });
    // Wide bounds, for a busy machine: here (2 shared cores, load 6) the delay was 0.5–0.7 s and the slowest search 0.9–1.3 s.
    expect(delay, figures).toBeLessThan(2);
    expect(sorted.at(-1)!, figures).toBeLessThan(4000);
  }, 900_000);
});
