import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One model cache per machine for every test, shared with the daemon tests (test/helpers/daemon.ts):
 * the ONNX graph is built once and reused, as the `<sha256>.onnx` cache is designed for.
 */
export const TEST_MODEL_CACHE_DIR = join(tmpdir(), 'docsearch-test-models');
