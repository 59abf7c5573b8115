#!/usr/bin/env bash
# The step of action.yml (a composite GitHub Action): `docsearch upload FOLDER --sync` with the action's inputs,
# which action.yml maps to INPUT_* variables. Writes the sync counts to $GITHUB_OUTPUT and a table to
# $GITHUB_STEP_SUMMARY, marks each failed file with an ::error annotation, and exits with docsearch's exit code:
# non-zero while any file of the folder is failed, and when a prune is stopped by the delete guard.
# test/cli/ci-walk.test.ts runs it with the environment Actions provides.
set -euo pipefail

fail() { echo "::error title=docsearch sync::$1"; exit 2; }
flag() { case "${1,,}" in true | yes | 1) return 0 ;; false | no | 0 | '') return 1 ;; *) fail "$2 must be true or false (got \"$1\")" ;; esac; }

[[ -n "${INPUT_SERVER:-}" ]] || fail 'the server input is required'
[[ -n "${INPUT_TOKEN:-}" ]] || fail 'the token input is required (an API key with write:documents, from a secret)'
[[ -n "${INPUT_PROJECT:-}" ]] || fail 'the project input is required'
echo "::add-mask::${INPUT_TOKEN}"

workspace="${GITHUB_WORKSPACE:-$PWD}"
folder="${INPUT_FOLDER:-docs}"
args=(upload "$folder" --sync --project "$INPUT_PROJECT" --json)
flag "${INPUT_PRUNE:-true}" prune && args+=(--prune)
[[ -n "${INPUT_PREFIX:-}" ]] && args+=(--prefix "$INPUT_PREFIX")
[[ -n "${INPUT_MAX_DELETE:-}" ]] && args+=(--max-delete "$INPUT_MAX_DELETE")
flag "${INPUT_FORCE:-false}" force && args+=(--force)
if flag "${INPUT_DRY_RUN:-false}" dry-run; then args+=(--dry-run); else args+=(--wait); fi
flag "${INPUT_CREATE_PROJECT:-false}" create-project && args+=(--create-project)

# docsearch from PATH, put there by an earlier step. Never fetched by name: docsearch-cli is not on the npm registry
# yet, and whatever someone else published under that name would be run with the token.
command -v docsearch > /dev/null ||
  fail 'no docsearch on PATH: install the light client in an earlier step (npm install -g ./docsearch-cli-<version>.tgz, packed from the docsearch repository); it is not on the npm registry, and a package published there under its name would not be docsearch'

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
cd "$workspace"
# The key goes in the environment, never on the command line; no terminal, so docsearch never prompts.
code=0
DOCSEARCH_URL="$INPUT_SERVER" DOCSEARCH_TOKEN="$INPUT_TOKEN" docsearch "${args[@]}" < /dev/null > "$out" || code=$?

# The JSON document (absent when docsearch stopped before syncing: a usage error, the delete guard) becomes outputs,
# a summary and annotations.
if [[ -s "$out" ]]; then
  node - "$out" "$folder" <<'JS'
const fs = require('node:fs');
const [file, folder] = process.argv.slice(2);
const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
const counts = doc.sync?.counts ?? {};
const append = (env, text) => process.env[env] && fs.appendFileSync(process.env[env], text);
append('GITHUB_OUTPUT', Object.entries(counts).map(([k, v]) => `${k}=${v}\n`).join(''));
const esc = (s) => String(s).replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
for (const f of doc.failed ?? []) console.log(`::error file=${esc(f.path)},title=docsearch: file failed::${esc(f.error)}`);
const rows = Object.entries(counts).map(([k, v]) => `| ${k} | ${v} |`).join('\n');
append('GITHUB_STEP_SUMMARY', `### docsearch sync of \`${folder}\`${doc.dry_run ? ' (dry run)' : ''}\n\n| files | count |\n|---|---|\n${rows}\n\n`);
console.log(`docsearch sync: ${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')}${doc.dry_run ? ' (dry run: nothing changed)' : ''}`);
JS
fi
exit "$code"
