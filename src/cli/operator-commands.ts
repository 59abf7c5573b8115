/**
 * The operator commands by name and summary: they run on the server machine and load the server (SQLite,
 * LanceDB, ONNX). Only names and words live here, so both programs can list them without importing server
 * code: src/main.ts pairs each with its loader, src/client-main.ts (the docsearch-cli package) with a refusal.
 * test/cli/startup.test.ts checks these summaries match the real commands.
 */
export const OPERATOR_SUMMARIES = {
  serve: 'run the docsearch daemon (API, OAuth server, web pages, ingestion)',
  users: 'manage accounts on this machine (operators)',
  groups: 'manage groups of accounts on this machine (operators)',
  reindex: 're-embed the index with the configured embedder (daemon stopped)',
  clients: 'manage OAuth clients on this machine (operators)',
  migrate: 'copy a library between a data directory and shared mode (daemons stopped)',
  backup: 'copy a running library into a backup (directory or s3://), incrementally',
  restore: 'restore a backup into an empty data directory or shared-mode database and storage, verified',
} as const;

export type OperatorName = keyof typeof OPERATOR_SUMMARIES;
