import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PrivateCa {
  /** The CA's certificate (PEM file): give it to a daemon as NODE_EXTRA_CA_CERTS, as an operator does. */
  caFile: string;
  ca: Buffer;
  /** A server certificate the CA signed for 127.0.0.1 and localhost, and its key. */
  cert: Buffer;
  key: Buffer;
  remove(): void;
}

/**
 * A private certificate authority made by Debian's openssl, as an organisation runs for its internal services, and
 * a server certificate it signed for 127.0.0.1: valid for a day.
 */
export function privateCa(): PrivateCa {
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-ca-'));
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '1', '-subj', '/CN=docsearch test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  openssl('req', ...ec, '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=127.0.0.1');
  writeFileSync(at('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  openssl('x509', '-req', '-in', at('server.csr'), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial', '-out', at('server.pem'), '-days', '1', '-extfile', at('server.ext'));
  return {
    caFile: at('ca.pem'),
    ca: readFileSync(at('ca.pem')),
    cert: readFileSync(at('server.pem')),
    key: readFileSync(at('server.key')),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
