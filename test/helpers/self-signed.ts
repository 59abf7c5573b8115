import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SelfSigned {
  /** PEM files: give `certFile` to a daemon as NODE_EXTRA_CA_CERTS so it trusts servers using it. */
  certFile: string;
  cert: Buffer;
  key: Buffer;
  remove(): void;
}

/** A certificate for https on 127.0.0.1 and localhost, made by Debian's openssl, valid for a day. */
export function selfSigned(): SelfSigned {
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-cert-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
    { stdio: 'ignore' },
  );
  return { certFile, cert: readFileSync(certFile), key: readFileSync(keyFile), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
