/**
 * Remote providers against https servers on 127.0.0.1 whose certificates this process does not trust (made by
 * openssl in a temp dir): the operator is told it is the certificate, with the TLS error code and what to do, not
 * that the server cannot be reached (which sends them looking at the network). Not retried: waiting does not fix it.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelError } from '../../src/models/errors.js';
import { HttpReranker } from '../../src/models/http-reranker.js';
import { OllamaEmbedder } from '../../src/models/ollama-embedder.js';
import { OllamaReranker } from '../../src/models/ollama-reranker.js';
import { OpenAIEmbedder } from '../../src/models/openai-embedder.js';
import { type PrivateCa, privateCa } from '../helpers/private-ca.js';
import { REPO } from '../helpers/daemon.js';
import { type SelfSigned, selfSigned } from '../helpers/self-signed.js';
import { startWireServer, type WireServer } from './wire-server.js';

let self: SelfSigned;
let ca: PrivateCa;
const servers: Server[] = [];
let selfSignedUrl: string;
let chainUrl: string;
let plain: WireServer;
let requests = 0;

async function listen(key: Buffer, cert: Buffer): Promise<string> {
  const server = createServer({ key, cert }, (_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: [{ index: 0, relevance_score: 0.5 }] }));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  self = selfSigned();
  ca = privateCa();
  selfSignedUrl = await listen(self.key, self.cert);
  // The server sends its CA along, as servers with an internal CA often do.
  chainUrl = await listen(ca.key, Buffer.concat([ca.cert, ca.ca]));
  plain = await startWireServer();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await plain.close();
  self.remove();
  ca.remove();
});

const tuning = { retries: 2, retryBaseDelayMs: 1, timeoutMs: 5_000 };
const untrusted = (code: string, detail: string): string =>
  `its TLS certificate is not trusted (${code}: ${detail}) — give the server a certificate from a public CA, ` +
  'or start docsearch with NODE_EXTRA_CA_CERTS set to the PEM file of the CA that signed it';

const failure = (work: Promise<unknown>): Promise<ModelError> =>
  work.then(
    () => {
      throw new Error('expected a failure');
    },
    (err: unknown) => {
      expect(err).toBeInstanceOf(ModelError);
      return err as ModelError;
    },
  );

describe('remote providers over https with a certificate this machine does not trust', () => {
  it('Ollama: a self-signed certificate is named as such, not "not reachable — is ollama serve running?"', async () => {
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', host: selfSignedUrl, ...tuning });
    const err = await failure(e.init());
    expect(err.message).toBe(`Ollama at ${selfSignedUrl}: ${untrusted('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate')}`);
    expect(err.transient).toBe(false);
    expect(e.status()).toMatchObject({ loaded: false, error: err.message });
    const r = new OllamaReranker({ model: 'qwen2.5:1.5b', host: selfSignedUrl, ...tuning });
    expect((await failure(r.rerank('q', ['a']))).message).toBe(err.message);
    expect(requests).toBe(0);
  });

  it('OpenAI-compatible: a certificate from a private CA the server sends along', async () => {
    const e = new OpenAIEmbedder({ model: 'text-embedding-3-small', baseUrl: chainUrl, ...tuning });
    const err = await failure(e.embed(['x'], { kind: 'query' }));
    expect(err.message).toBe(
      `OpenAI-compatible embeddings endpoint at ${chainUrl}/v1/embeddings: ${untrusted('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain')}`,
    );
    expect(err.transient).toBe(false);
  });

  it('rerank endpoint: an https:// URL for a server that speaks plain http', async () => {
    const url = plain.url.replace('http:', 'https:');
    const err = await failure(new HttpReranker({ url, ...tuning }).rerank('q', ['a']));
    expect(err.message).toBe(
      `Rerank endpoint at ${url}/v1/rerank: the TLS handshake failed (ERR_SSL_WRONG_VERSION_NUMBER) — is it serving https on that port? If it speaks plain http, use an http:// URL`,
    );
    expect(err.transient).toBe(false);
    expect(plain.requests).toHaveLength(0);
  });
});

describe('remote providers over https, the CA trusted through NODE_EXTRA_CA_CERTS (as the message advises)', () => {
  it('works with a valid certificate; an expired one, or one for another name, is named as such', async () => {
    // Node reads NODE_EXTRA_CA_CERTS at start, so the provider runs in a child process started with it.
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-tls-'));
    try {
      const at = (name: string) => join(dir, name);
      const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
      const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
      openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=docsearch test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
      const leaf = (name: string, san: string): void => {
        openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
        writeFileSync(at(`${name}.ext`), `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
      };
      leaf('valid', 'IP:127.0.0.1');
      openssl('x509', '-req', '-in', 'valid.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'valid.pem', '-days', '1', '-extfile', 'valid.ext');
      leaf('other', 'DNS:other.example');
      openssl('x509', '-req', '-in', 'other.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'other.pem', '-days', '1', '-extfile', 'other.ext');
      // `openssl ca` takes explicit dates (openssl 3.0's `x509 -req` does not): a day in 2020.
      leaf('expired', 'IP:127.0.0.1');
      writeFileSync(at('index.txt'), '');
      writeFileSync(at('serial'), '1000\n');
      writeFileSync(at('ca.cnf'), '[ca]\ndefault_ca=d\n[d]\ndatabase=index.txt\nnew_certs_dir=.\nserial=serial\ndefault_md=sha256\npolicy=p\n[p]\ncommonName=supplied\n');
      openssl('ca', '-batch', '-config', 'ca.cnf', '-cert', 'ca.pem', '-keyfile', 'ca.key', '-in', 'expired.csr', '-out', 'expired.pem', '-startdate', '20200101000000Z', '-enddate', '20200102000000Z', '-extfile', 'expired.ext');
      const url = async (name: string) => listen(readFileSync(at(`${name}.key`)), readFileSync(at(`${name}.pem`)));
      const urls = { valid: await url('valid'), expired: await url('expired'), other: await url('other') };
      const before = requests;
      const child = `
        const { HttpReranker } = await import(${JSON.stringify(join(REPO, 'dist/models/http-reranker.js'))});
        const urls = ${JSON.stringify(urls)};
        const out = {};
        for (const [name, url] of Object.entries(urls)) {
          out[name] = await new HttpReranker({ url, retries: 2, retryBaseDelayMs: 1 }).rerank('q', ['a']).then(
            (scores) => ({ scores }),
            (err) => ({ message: err.message, transient: err.transient }),
          );
        }
        console.log(JSON.stringify(out));`;
      writeFileSync(at('child.mjs'), child);
      const { stdout } = await promisify(execFile)(process.execPath, [at('child.mjs')], {
        timeout: 60_000,
        env: { ...process.env, NODE_OPTIONS: '', NODE_EXTRA_CA_CERTS: at('ca.pem') },
      });
      expect(JSON.parse(stdout)).toEqual({
        valid: { scores: [0.5] },
        expired: {
          message: `Rerank endpoint at ${urls.expired}/v1/rerank: its TLS certificate is not valid now (CERT_HAS_EXPIRED: certificate has expired) — renew the server's certificate, or check this machine's clock`,
          transient: false,
        },
        other: {
          message: `Rerank endpoint at ${urls.other}/v1/rerank: its TLS certificate is not for this host name (ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list:) — use a URL with a name the certificate lists`,
          transient: false,
        },
      });
      // Only the valid server was asked anything; the others were not retried.
      expect(requests - before).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
