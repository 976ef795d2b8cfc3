#!/usr/bin/env bash
# Set up and run gbrank's main job on the bundled example data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/gbrank demo "$@"
