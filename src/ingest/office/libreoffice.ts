/**
 * Legacy binary Office files (.doc, .xls, .ppt) through LibreOffice, when it is installed (Debian:
 * libreoffice-writer-nogui, -calc-nogui, -impress-nogui): `soffice --headless --convert-to` turns one into its
 * modern twin (.docx, .xlsx, .pptx), which the modern parser then reads. No JavaScript library reads these
 * formats well, and LibreOffice is what people already use to open them — as native Tesseract reads scans when it
 * is installed (ocr/native.ts), found at start the same way.
 *
 * Each conversion is sandboxed: a fresh temporary directory as its home, its profile (`-env:UserInstallation`,
 * so no running LibreOffice or user setting is touched, and two conversions never share one) and its output;
 * macros switched off in that profile; no network where user namespaces allow it (`unshare -rn`, found by the
 * probe); only PATH and the locale from the daemon's environment; a time limit after which its whole process group
 * is killed (run-tool.ts); a bound on the converted file's size. The directory is removed whatever happens.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ParseError } from '../parsers/errors.js';
import { seconds } from '../ocr/duration.js';
import { runTool, toolFailure, ToolTimeout } from '../run-tool.js';
import { CONVERTED_TO, DOC, PPT, TYPE_NAMES, XLS, type LegacyOfficeType } from '../types.js';

const PROBE_TIMEOUT_MS = 20_000;

export interface LibreOffice {
  path: string;
  /** e.g. "7.4.7.2". */
  version: string;
  /** Run before `path` to cut the network off (`unshare -rn`), or empty where user namespaces are not allowed. */
  isolate: string[];
}

export interface ConvertOptions {
  timeoutMs: number;
  /** The most bytes the converted file may have. */
  maxOutputBytes: number;
}

/** What a person knows each legacy type as, and the extension LibreOffice's filter takes and gives. */
const LEGACY: Record<LegacyOfficeType, { noun: string; from: string; to: string }> = {
  [DOC]: { noun: 'the Word 97–2003 document (.doc)', from: 'doc', to: 'docx' },
  [XLS]: { noun: 'the Excel 97–2003 workbook (.xls)', from: 'xls', to: 'xlsx' },
  [PPT]: { noun: 'the PowerPoint 97–2003 presentation (.ppt)', from: 'ppt', to: 'pptx' },
};

/** The Debian packages that convert each legacy type: what a refusal tells the operator to install. */
export const LIBREOFFICE_PACKAGES = 'libreoffice-writer-nogui, libreoffice-calc-nogui and libreoffice-impress-nogui';

/** Macros never run, whatever the document asks: the profile's security level is "very high", execution off. */
const PROFILE_SETTINGS = `<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
</oor:items>
`;

/**
 * Checks that `path` is LibreOffice (`--version`) and whether `unshare -rn` can cut its network off. Throws an
 * Error saying why it cannot be used.
 */
export async function probeLibreOffice(path = 'soffice'): Promise<LibreOffice> {
  const res = await runTool(path, ['--version'], { timeoutMs: PROBE_TIMEOUT_MS, env: sandboxEnv(tmpdir()) });
  const m = /^LibreOffice (\d+\.\d+[\d.]*)/m.exec(res.stdout);
  if (res.code !== 0 || !m) throw new Error(`${path} --version did not answer as LibreOffice does${toolFailure(res)}`);
  const isolated = await runTool('unshare', ['-rn', 'true'], { timeoutMs: PROBE_TIMEOUT_MS }).then(
    (r) => r.code === 0,
    () => false,
  );
  return { path, version: m[1]!, isolate: isolated ? ['unshare', '-rn'] : [] };
}

/** What a legacy Office file is and why it cannot be read here, with what to do: follows "… is ". */
export function legacyRefusal(type: LegacyOfficeType, disabled: boolean): string {
  const { noun, to } = LEGACY[type];
  const why = disabled ? 'converting it with LibreOffice is switched off (--libreoffice off)' : `it needs LibreOffice, which is not installed (Debian: ${LIBREOFFICE_PACKAGES})`;
  return `${noun.replace(/^the /, 'a ')}, which this server cannot read: ${why} — or save it as .${to}`;
}

export const describeLibreOffice = (office: LibreOffice): string => `LibreOffice ${office.version}`;

/** Converts a legacy Office file to its modern twin; rejects with a ParseError that names the legacy format. */
export async function convertLegacy(office: LibreOffice, bytes: Uint8Array, type: LegacyOfficeType, options: ConvertOptions): Promise<Uint8Array> {
  const { noun, from, to } = LEGACY[type];
  const dir = await mkdtemp(join(tmpdir(), 'docsearch-office-'));
  try {
    const input = join(dir, `document.${from}`);
    const out = join(dir, 'out');
    await mkdir(join(dir, 'profile', 'user'), { recursive: true });
    await writeFile(join(dir, 'profile', 'user', 'registrymodifications.xcu'), PROFILE_SETTINGS);
    await writeFile(input, bytes);
    const args = [
      `-env:UserInstallation=${pathToFileURL(join(dir, 'profile')).href}`,
      '--headless', '--norestore', '--nologo', '--nodefault', '--nolockcheck',
      '--convert-to', to, '--outdir', out, input,
    ];
    const [command, ...prefix] = [...office.isolate, office.path];
    let res;
    try {
      res = await runTool(command!, [...prefix, ...args], { timeoutMs: options.timeoutMs, nice: true, env: sandboxEnv(dir) });
    } catch (err) {
      if (err instanceof ToolTimeout) throw new ParseError(`${noun} could not be converted: LibreOffice took longer than ${seconds(options.timeoutMs)}`);
      throw new ParseError(`${noun} could not be converted: ${(err as Error).message}`);
    }
    const converted = join(out, `document.${to}`);
    const size = await stat(converted).then((s) => s.size, () => undefined);
    // LibreOffice exits 0 even when it could not read the file: the missing output says so.
    if (size === undefined) throw new ParseError(`${noun} could not be converted: LibreOffice could not read it (damaged, password-protected, or not really a ${TYPE_NAMES[type]} file)${toolFailure(res)}`);
    if (size > options.maxOutputBytes) throw new ParseError(`${noun} converts to more than ${Math.round(options.maxOutputBytes / 1024 / 1024)} MB of ${TYPE_NAMES[CONVERTED_TO[type]]} — too large to index`);
    return await readFile(converted);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Only what LibreOffice needs from the daemon's environment (never its secrets), with the sandbox as home. */
function sandboxEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { HOME: home, TMPDIR: home, SAL_USE_VCLPLUGIN: 'svp' };
  for (const key of ['PATH', 'LANG', 'LC_ALL']) if (process.env[key] !== undefined) env[key] = process.env[key];
  return env;
}
