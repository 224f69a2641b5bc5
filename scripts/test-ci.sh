#!/usr/bin/env bash
# The whole test command with the closing line CI reads: gates first (generated types, spec lint,
# typecheck, the build `npm start` runs), then every tap test; exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
failed=0
for gate in check:gen lint:spec typecheck build; do
  if ! npm run -s "$gate"; then echo "gate failed: $gate"; failed=1; fi
done
npx tap --reporter=tap 2>&1 | node --import tsx scripts/tap-summary.ts
status=$?
if [ "$failed" -ne 0 ]; then echo "0 passed, 1 failed"; exit 1; fi
exit "$status"
