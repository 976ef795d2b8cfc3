#!/usr/bin/env bash
# Set up and run the test suite (integration tests on ../shared/data run when it is there).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ -z "${GBRANK_DATA:-}" ] && [ -d ../shared/data ]; then
    export GBRANK_DATA="$(cd ../shared/data && pwd)"
fi
exec .venv/bin/python -m pytest -q -m "not slow" "$@"
