/**
 * A real Apache httpd from Debian (apache2) for the source tests, on free loopback ports, everything under a temp
 * dir: a WebDAV folder (mod_dav, basic authentication), a static site (its own root, for robots.txt and
 * sitemap.xml) and Git repositories over smart HTTP (git http-backend as CGI), one port each. One server per test
 * file (`startApache()` in beforeAll, `stop()` in afterAll). As root it serves as www-data, which Apache requires.
 */
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { unmet } from './requirement.js';
import { spawnServer } from './spawned-server.js';

const APACHE = '/usr/sbin/apache2';
const MODULES = '/usr/lib/apache2/modules';
const GIT_BACKEND = '/usr/lib/git-core/git-http-backend';

export interface Apache {
  /** http://127.0.0.1:PORT of the WebDAV folder (basic authentication as `davUser`). */
  davUrl: string;
  davUser: { name: string; password: string };
  /** The folder the WebDAV URL serves (write files here as its owner would through WebDAV). */
  davDir: string;
  /** http://127.0.0.1:PORT of the static site, and its document root. */
  siteUrl: string;
  siteDir: string;
  /** http://127.0.0.1:PORT/<name>.git serves the bare repository gitDir/<name>.git; under /private/ with `davUser`'s basic authentication. */
  gitUrl: string;
  gitDir: string;
  /** The static site's access log so far: one `GET /path HTTP/1.1 STATUS` line per request. */
  siteLog(): string;
  /** Makes a file or folder the server writes or reads as its own user (www-data under root). */
  own(path: string): void;
  /** Changes `davUser`'s password at the server (WebDAV and Git): what a source holds stops working. */
  setPassword(password: string): void;
  /** The server stopped (every port refuses) until `resume()`, then started again as it was. */
  halt(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** Why Apache cannot run here, or null (under CI a reason fails the run: requirement.ts). */
export function apacheUnavailable(): string | null {
  if (!existsSync(APACHE) || !existsSync(join(MODULES, 'mod_dav_fs.so'))) return unmet('Apache is not installed (Debian: apt-get install apache2)');
  if (!existsSync(GIT_BACKEND)) return unmet('git http-backend is not installed (Debian: apt-get install git)');
  return null;
}

export async function startApache(): Promise<Apache> {
  const reason = apacheUnavailable();
  if (reason) throw new Error(reason);
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-apache-'));
  // Apache's children (www-data under root) must reach everything beneath.
  chmodSync(dir, 0o755);
  const root = process.getuid?.() === 0;
  const www = root ? { uid: Number(readId('www-data', 'passwd')), gid: Number(readId('www-data', 'group')) } : null;
  const own = (path: string) => {
    if (www) chownSync(path, www.uid, www.gid);
  };
  const davDir = join(dir, 'dav');
  const siteDir = join(dir, 'site');
  const gitDir = join(dir, 'git');
  for (const d of [davDir, siteDir, gitDir, join(dir, 'run'), join(dir, 'locks')]) mkdirSync(d, { mode: 0o755 });
  own(join(dir, 'locks'));
  own(davDir);
  const davUser = { name: 'alice', password: 'correct-horse-dav' };
  // {SHA}: Apache's own scheme for htpasswd files, written here without htpasswd. Read at each request.
  const setPassword = (password: string) =>
    writeFileSync(join(dir, 'htpasswd'), `${davUser.name}:{SHA}${createHash('sha1').update(password).digest('base64')}\n`, { mode: 0o644 });
  setPassword(davUser.password);
  const [davPort, sitePort, gitPort] = [await freePort(), await freePort(), await freePort()];
  const modules = ['mpm_prefork', 'authz_core', 'authn_core', 'authn_file', 'auth_basic', 'authz_user', 'dav', 'dav_fs', 'alias', 'cgi', 'env', 'mime', 'dir'];
  writeFileSync(
    join(dir, 'httpd.conf'),
    `ServerRoot ${dir}
ServerName 127.0.0.1
PidFile ${dir}/run/httpd.pid
ErrorLog ${dir}/error.log
LogLevel warn
${modules.map((m) => `LoadModule ${m}_module ${MODULES}/mod_${m}.so`).join('\n')}
${root ? 'User www-data\nGroup www-data' : ''}
StartServers 2
MinSpareServers 1
MaxSpareServers 4
TypesConfig /etc/mime.types
DavLockDB ${dir}/locks/davlock
Listen 127.0.0.1:${davPort}
Listen 127.0.0.1:${sitePort}
Listen 127.0.0.1:${gitPort}
<VirtualHost 127.0.0.1:${davPort}>
  DocumentRoot ${davDir}
  <Directory ${davDir}>
    Dav On
    AuthType Basic
    AuthName "dav"
    AuthUserFile ${dir}/htpasswd
    Require valid-user
  </Directory>
</VirtualHost>
<VirtualHost 127.0.0.1:${sitePort}>
  LogFormat "%r %>s" brief
  CustomLog ${dir}/site-access.log brief
  DocumentRoot ${siteDir}
  <Directory ${siteDir}>
    Require all granted
    DirectoryIndex index.html
  </Directory>
</VirtualHost>
<VirtualHost 127.0.0.1:${gitPort}>
  SetEnv GIT_PROJECT_ROOT ${gitDir}
  SetEnv GIT_HTTP_EXPORT_ALL 1
  SetEnv GIT_CONFIG_COUNT 1
  SetEnv GIT_CONFIG_KEY_0 safe.directory
  SetEnv GIT_CONFIG_VALUE_0 *
  ScriptAlias / ${GIT_BACKEND}/
  <Directory /usr/lib/git-core>
    Require all granted
  </Directory>
  <Location /private/>
    AuthType Basic
    AuthName "git"
    AuthUserFile ${dir}/htpasswd
    Require valid-user
  </Location>
</VirtualHost>
`,
  );
  const { stop, halt, resume } = await spawnServer('apache2', APACHE, ['-d', dir, '-f', join(dir, 'httpd.conf'), '-DFOREGROUND'], { dir, ports: [davPort, sitePort, gitPort], log: join(dir, 'error.log') });
  return {
    davUrl: `http://127.0.0.1:${davPort}`,
    davUser,
    davDir,
    siteUrl: `http://127.0.0.1:${sitePort}`,
    siteDir,
    gitUrl: `http://127.0.0.1:${gitPort}`,
    gitDir,
    siteLog: () => (existsSync(join(dir, 'site-access.log')) ? readFileSync(join(dir, 'site-access.log'), 'utf8') : ''),
    own,
    setPassword,
    halt,
    resume,
    stop,
  };
}

/** A user's or group's numeric id from /etc/passwd or /etc/group. */
function readId(name: string, file: 'passwd' | 'group'): string {
  const line = readFileSync(`/etc/${file}`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) throw new Error(`no ${file === 'passwd' ? 'user' : 'group'} ${name} (${userInfo().username} runs the tests)`);
  return line.split(':')[2]!;
}
