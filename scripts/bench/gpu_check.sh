#!/usr/bin/env bash
# A short prepared check for a machine with a CUDA GPU (under 5 minutes):
#
#   bash scripts/bench/gpu_check.sh            # after make install
#
# 1. the real CLI trains the benchmark spec on CUDA with bf16 autocast for 200
#    steps (validation, checkpoints, TensorBoard included) and evaluates it,
#    then the same for the Transformer spec (configs/multi30k/bench_transformer.yaml);
# 2. bench/train.py: training throughput and peak GPU memory, bf16 and fp32;
# 3. bench/decode.py: greedy and beam-5 decoding of test_2016_flickr on CUDA.
# Multi30k comes from $SEQ2SEQ_DATA_MIRROR (default ../shared/data/multi30k).
# Outputs go to $OUT (default /tmp/seq2seq_gpu_check). Never needed by tests or CI.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-$REPO/.venv/bin/python}
OUT=${OUT:-/tmp/seq2seq_gpu_check}
export SEQ2SEQ_DATA_MIRROR=${SEQ2SEQ_DATA_MIRROR:-$REPO/../shared/data/multi30k}
cd "$REPO"
if ! "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  echo "error: no CUDA device here; run this on a GPU machine" >&2
  exit 2
fi
mkdir -p "$OUT"
"$PY" -c "import torch; print('device:', torch.cuda.get_device_name(0), '| torch', torch.__version__)"
[[ -f data/multi30k/train.de.gz ]] || "$PY" -m seq2seq prepare multi30k --src de --tgt en
run() { echo "+ $*" >&2; "$@"; }
run "$PY" -m seq2seq train --config configs/multi30k/bench_additive.yaml --device cuda \
  --overwrite --set "runs_dir=$OUT/runs" --set train.max_steps=200 \
  --set train.val_every=100 --set train.val_max_sentences=200
run "$PY" -m seq2seq evaluate "$OUT/runs/multi30k/bench_additive" --device cuda
# the Transformer of the same spec's peer: bf16 autocast, the fused attention kernel
run "$PY" -m seq2seq train --config configs/multi30k/bench_transformer.yaml --device cuda \
  --overwrite --set "runs_dir=$OUT/runs" --set train.max_steps=200 \
  --set train.val_every=100 --set train.val_max_sentences=200
run "$PY" -m seq2seq evaluate "$OUT/runs/multi30k/bench_transformer" --device cuda --beam 5
for precision in bf16 fp32; do
  run "$PY" scripts/bench/train.py --device cuda --steps 200 --warmup 20 \
    --set "train.precision=$precision" --out "$OUT/bench_$precision" \
    | tee "$OUT/bench_train_$precision.json"
done
run "$PY" scripts/bench/decode.py "$OUT/bench_bf16" --device cuda --beam 1 --beam 5 \
  | tee "$OUT/bench_decode.json"
