import { spawnSync } from 'node:child_process';

let found: boolean | undefined;

/** Whether LibreOffice is on the PATH: a daemon started with the default `--libreoffice auto` then converts legacy Office. */
export const hasLibreOffice = (): boolean => (found ??= spawnSync('soffice', ['--version'], { timeout: 30_000 }).status === 0);

const READ = 'PDF, DOCX, ODT, RTF, EPUB, PPTX, ODP, XLSX, ODS, CSV, TSV, TXT, Markdown, HTML, EML, PNG, JPEG, TIFF, WebP';

/** The "accepted: …" list of a 415, as a daemon names it with legacy Office converted or not. */
export const acceptedList = (legacyOffice = hasLibreOffice()): string => (legacyOffice ? `${READ}; DOC, XLS and PPT through LibreOffice` : READ);
