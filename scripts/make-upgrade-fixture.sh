#!/usr/bin/env bash
# Makes the upgrade fixture of a release: test/fixtures/upgrade/<release>/, the library that release's own code
# wrote (embedded and shared mode) and what it answered, for test/store/upgrade-from-release.test.ts.
#
#   scripts/make-upgrade-fixture.sh [TAG or COMMIT]      (default v0.1.0)
#
# The release's code is taken from git (`git archive`, so the checkout's own files are never touched), built
# with this checkout's node_modules (a release's dependencies are ones this checkout still has: check
# package.json if a release dropped one), and run by test/fixtures/upgrade/make-fixture.ts. Shared mode starts
# Debian's PostgreSQL 15 and Ceph RGW as the tests do (root, packages postgresql-15 radosgw ceph-mon ceph-osd).
# The commit is written in the fixture's README: a clone may lack the tag.
set -euo pipefail
REF=${1:-v0.1.0}
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
COMMIT=$(git rev-parse --verify "$REF^{commit}")
# A tag names the fixture; a bare commit, its short hash.
if git rev-parse --verify -q "refs/tags/$REF" >/dev/null; then NAME=$REF; else NAME=$(git rev-parse --short "$COMMIT"); fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
git archive "$COMMIT" | tar -x -C "$WORK"
ln -s "$(readlink -f "$REPO/node_modules")" "$WORK/node_modules"
(cd "$WORK" && npm run --silent build)
node --import tsx test/fixtures/upgrade/make-fixture.ts "$WORK" "$COMMIT" "$NAME" "test/fixtures/upgrade/$NAME"
du -sh "test/fixtures/upgrade/$NAME"
