#!/usr/bin/env bash
# Test BLEU of JoeyNMT 2.3.0 and seq2seq over several seeds: for each seed, a
# full side-by-side run of bench/joeynmt.sh (both toolkits train STEPS updates
# with that seed, then decode test_2016_flickr), then the summary.
#
#   bash scripts/bench/seeds.sh STEPS SEED...   # e.g. 2280 42 1 2: ~45 min a seed
#
# Seed N runs in $BENCH_DIR/seedN (default /tmp/seq2seq_seeds/seedN); all
# seeds share one JoeyNMT venv ($BENCH_DIR/venv). A seed whose report.json is
# there for the same STEPS is not run again, so an interrupted run picks up
# where it stopped. The summary (scripts/bench/seeds.py) gives each seed's
# BLEU and speed ratios, and per toolkit the mean and standard deviation.
set -euo pipefail

STEPS=${1:-}
ROOT=${BENCH_DIR:-/tmp/seq2seq_seeds}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
if [[ -z $STEPS ]] || (( $# < 2 )); then
  echo "error: usage: bash scripts/bench/seeds.sh STEPS SEED... (e.g. 2280 42 1 2)" >&2
  exit 2
fi
shift
for seed in "$@"; do
  if ! [[ $seed =~ ^[0-9]+$ ]]; then
    echo "error: seed '$seed': must be a whole number >= 0" >&2
    exit 2
  fi
done

dirs=()
for seed in "$@"; do
  dir=$ROOT/seed$seed
  dirs+=("$dir")
  if [[ -s $dir/report.json ]] && grep -q "\"steps\": $STEPS," "$dir/report.json"; then
    echo "[seeds] seed $seed: $dir/report.json is there, not run again" >&2
    continue
  fi
  mkdir -p "$dir"
  echo "[seeds] seed $seed: bench/joeynmt.sh $STEPS in $dir" >&2
  SEED=$seed BENCH_DIR=$dir JOEY_VENV=$ROOT/venv \
    bash "$REPO/scripts/bench/joeynmt.sh" "$STEPS" > "$dir/report.json.part"
  mv "$dir/report.json.part" "$dir/report.json"  # only a finished run counts
done
"$REPO/.venv/bin/python" "$REPO/scripts/bench/seeds.py" "${dirs[@]}"
