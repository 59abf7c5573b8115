// Loaded with `node --import` into a process under test: appends each package the process imports by bare name
// to the file $DOCSEARCH_TEST_IMPORTS_FILE, one per line (what a lazy import must keep out of a start).
import { register } from 'node:module';

register('./record-imports-hook.mjs', import.meta.url, { data: { file: process.env.DOCSEARCH_TEST_IMPORTS_FILE } });
