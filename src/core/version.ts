import { readFileSync } from 'node:fs';

/** The package version, read from package.json beside dist/ (works from src via tsx too). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
