#!/usr/bin/env bash
# JoeyNMT 2.3.0 and seq2seq side by side on the benchmark spec, in one run.
#
#   bash scripts/bench/joeynmt.sh [STEPS]          # default 320 updates each
#   bash scripts/bench/joeynmt.sh STEPS transformer    # the Transformer spec
#   bash scripts/bench/joeynmt.sh STEPS [transformer] --decode-only  # decode again only
#   REPEATS=3 bash scripts/bench/joeynmt.sh ...        # each decode 3 times
#   SEED=1 bash scripts/bench/joeynmt.sh ...           # both toolkits' seed (42)
#   OURS_SET="train.recurrence=compiled" bash ...      # extra --set for ours only
#
# Installs JoeyNMT into its own venv ($JOEY_VENV, default $BENCH_DIR/venv),
# prepares Multi30k de-en ($SEQ2SEQ_DATA_MIRROR, default data/multi30k as
# `seq2seq prepare multi30k` leaves it) with a joint sentencepiece unigram 8000 model,
# trains JoeyNMT with
# scripts/bench/joeynmt/rnn_m30k_deen.yaml for STEPS updates, then ours on
# the same spec (scripts/bench/train.py, configs/multi30k/bench_additive.yaml);
# with `transformer`, JoeyNMT's transformer_m30k_deen.yaml against
# configs/multi30k/bench_transformer.yaml (scratch under $BENCH_DIR/transformer);
# decodes test_2016_flickr greedy and beam 5 with both (JoeyNMT's "test",
# scripts/bench/decode.py) and prints both and the ratios as JSON. Everything runs
# one after the other on $THREADS threads (default 2), so the two share the
# machine's state. Scratch files go to $BENCH_DIR (default /tmp/seq2seq_bench).
# --decode-only keeps the two models an earlier run of the same STEPS trained
# and measures both decoders again, side by side (a minute per repetition).
# Decoding runs REPEATS times (default 1), the toolkits interleaved, and the
# report keeps each one's fastest: this machine's speed drifts by tens of
# percent within minutes.
set -euo pipefail

STEPS=${1:-320}
[[ $# -gt 0 ]] && shift
DECODE_ONLY=""
SPEC_NAME=rnn
for arg in "$@"; do
  case $arg in
    rnn|transformer) SPEC_NAME=$arg ;;
    --decode-only) DECODE_ONLY=$arg ;;
    *) echo "error: unknown option '$arg' (rnn, transformer, --decode-only)" >&2; exit 2 ;;
  esac
done
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${BENCH_DIR:-/tmp/seq2seq_bench}  # the venv and the data, shared by both specs
WORK=$BASE
[[ $SPEC_NAME == transformer ]] && WORK=$BASE/transformer
# The files `seq2seq prepare multi30k` downloaded, else the mirror beside the checkout.
MIRROR=$REPO/data/multi30k
[[ -f $MIRROR/train.de.gz ]] || MIRROR=$REPO/../shared/data/multi30k
MIRROR=${SEQ2SEQ_DATA_MIRROR:-$MIRROR}
SPEC=$REPO/scripts/bench/joeynmt/rnn_m30k_deen.yaml
OURS_CONFIG=$REPO/configs/multi30k/bench_additive.yaml
if [[ $SPEC_NAME == transformer ]]; then
  SPEC=$REPO/scripts/bench/joeynmt/transformer_m30k_deen.yaml
  OURS_CONFIG=$REPO/configs/multi30k/bench_transformer.yaml
fi
THREADS=${THREADS:-2}
REPEATS=${REPEATS:-1}
SEED=${SEED:-42}
# Space-separated key=value overrides for our training only (each becomes --set).
read -r -a OURS_SET_ARGS <<< "${OURS_SET:-}"
OURS_OVERRIDES=()
for kv in "${OURS_SET_ARGS[@]}"; do
  if [[ $kv != *=* ]]; then
    echo "error: OURS_SET item '$kv': expected key=value (e.g. train.recurrence=compiled)" >&2
    exit 2
  fi
  OURS_OVERRIDES+=(--set "$kv")
done
PY=$REPO/.venv/bin/python
VENV=${JOEY_VENV:-$BASE/venv}
JPY=$VENV/bin/python
export OMP_NUM_THREADS=$THREADS
mkdir -p "$WORK"
log() { echo "[bench] $*" >&2; }

if ! [[ $REPEATS =~ ^[1-9][0-9]*$ ]]; then
  echo "error: REPEATS=$REPEATS: must be a whole number >= 1" >&2
  exit 2
fi
if ! [[ $SEED =~ ^[0-9]+$ ]]; then
  echo "error: SEED=$SEED: must be a whole number >= 0" >&2
  exit 2
fi
if (( STEPS % 20 != 0 )); then
  echo "error: STEPS must be a multiple of 20 (JoeyNMT's logging interval)" >&2
  exit 2
fi
for f in "$SPEC" "$OURS_CONFIG" "$MIRROR/train.de.gz" "$PY"; do
  [[ -e $f ]] || { echo "error: $f not found (run make install; see README)" >&2; exit 2; }
done
if [[ $DECODE_ONLY == --decode-only ]]; then
    for f in "$WORK/models/bench/latest.ckpt" "$WORK/ours_run/last.pt" \
        "$WORK/ours_train.json"; do
      [[ -e $f ]] || { echo "error: $f not found: --decode-only needs a full run" \
        "of bash scripts/bench/joeynmt.sh $STEPS first" >&2; exit 2; }
    done
    if ! grep -q "updates: $STEPS\$" "$WORK/joey.yaml"; then
      echo "error: $WORK/joey.yaml was not trained for $STEPS updates;" \
        "run bash scripts/bench/joeynmt.sh $STEPS first" >&2
      exit 2
    fi
fi

# --- JoeyNMT in its own venv (pins: scripts/bench/joeynmt/README.md) ---------------
if [[ ! -f $VENV/.installed ]]; then
  log "installing JoeyNMT 2.3.0 into $VENV"
  python3 -m venv "$VENV"
  "$JPY" -m pip install --quiet torch==2.13.0 joeynmt==2.3.0 importlib_metadata \
    sentencepiece==0.2.0
  touch "$VENV/.installed"
fi

# --- data: plain text and a joint sentencepiece model ------------------------
DATA=$BASE/data
if [[ ! -f $DATA/spm/joint.vocab ]]; then
  log "preparing Multi30k de-en in $DATA"
  mkdir -p "$DATA/multi30k" "$DATA/spm"
  for pair in train:train val:dev test_2016_flickr:test; do
    for lang in de en; do
      gunzip -c "$MIRROR/${pair%%:*}.$lang.gz" > "$DATA/multi30k/${pair##*:}.$lang"
    done
  done
  "$JPY" - "$DATA" <<'EOF'
import sys
import sentencepiece as spm
data = sys.argv[1]
spm.SentencePieceTrainer.train(
    input=f"{data}/multi30k/train.de,{data}/multi30k/train.en",
    model_prefix=f"{data}/spm/joint", vocab_size=8000, model_type="unigram",
    character_coverage=1.0, minloglevel=2,
)
sp = spm.SentencePieceProcessor(model_file=f"{data}/spm/joint.model")
with open(f"{data}/spm/joint.vocab", "w", encoding="utf-8") as f:
    f.writelines(sp.id_to_piece(i) + "\n" for i in range(sp.get_piece_size()))
EOF
fi

CFG=$WORK/joey.yaml
if [[ -z $DECODE_ONLY ]]; then  # training, both toolkits (not with --decode-only)
# --- the machine's fp32 matmul peak now, before JoeyNMT runs (ours is measured
# again inside scripts/bench/train.py): a shared machine can drift within one run -----
"$PY" "$REPO/scripts/bench/train.py" --peak --threads "$THREADS" > "$WORK/peak_before.txt"

# --- JoeyNMT: train STEPS updates ---------------------------------------------
# No validation inside (validation_freq stays above STEPS); JoeyNMT saves the
# final weights as latest.ckpt when training ends.
sed -e "s#@WORK@/data#$DATA#g" -e "s#@WORK@#$WORK#g" -e "s#@RUN@#bench#g" -e "s#updates: 320#updates: $STEPS#" \
  -e "s#^random_seed: 42\$#random_seed: $SEED#" "$SPEC" > "$CFG"
log "JoeyNMT: training $STEPS updates"
/usr/bin/time -v "$JPY" -m joeynmt train "$CFG" --skip-test \
  > "$WORK/joey_train.log" 2> "$WORK/joey_train.err"

# --- ours: the same steps on the same spec ------------------------------------
log "seq2seq: training $STEPS updates"
SEQ2SEQ_DATA_MIRROR=$MIRROR "$PY" -m seq2seq prepare multi30k --src de --tgt en \
  --out "$WORK/ours_data" >&2
/usr/bin/time -v "$PY" "$REPO/scripts/bench/train.py" --config "$OURS_CONFIG" --threads "$THREADS" \
  --steps $((STEPS - 20)) --warmup 20 --out "$WORK/ours_run" --set "train.seed=$SEED" \
  --set "data.train.src=$WORK/ours_data/train.de.gz" \
  --set "data.train.tgt=$WORK/ours_data/train.en.gz" \
  --set "data.val.src=$WORK/ours_data/val.de.gz" \
  --set "data.val.tgt=$WORK/ours_data/val.en.gz" \
  --set "data.test.src=$WORK/ours_data/test_2016_flickr.de.gz" \
  --set "data.test.tgt=$WORK/ours_data/test_2016_flickr.en.gz" \
  ${OURS_OVERRIDES[@]+"${OURS_OVERRIDES[@]}"} \
  > "$WORK/ours_train.json" 2> "$WORK/ours_train.err"
fi

# --- decoding: JoeyNMT's greedy and beam 5, then ours, REPEATS times ------------
# Interleaved, so that a slow spell of the machine hits both; the report keeps
# each toolkit's fastest repetition.
for beam in 1 5; do
  sed -e "s#beam_size: 1#beam_size: $beam\n    beam_alpha: 1.0#" \
    -e "s#testing:#testing:\n    load_model: \"$WORK/models/bench/latest.ckpt\"#" \
    "$CFG" > "$WORK/joey_beam$beam.yaml"
done
rm -f "$WORK"/joey_test_beam?.r*.log "$WORK"/ours_decode.r*.json
for rep in $(seq 1 "$REPEATS"); do
  for beam in 1 5; do
    log "JoeyNMT: decoding, beam $beam ($rep/$REPEATS)"
    "$JPY" -m joeynmt test "$WORK/joey_beam$beam.yaml" -o "$WORK/joey_hyp_beam$beam" \
      > "$WORK/joey_test_beam$beam.r$rep.log" 2>&1
  done
  log "seq2seq: decoding, greedy and beam 5 ($rep/$REPEATS)"
  "$PY" "$REPO/scripts/bench/decode.py" "$WORK/ours_run" --threads "$THREADS" \
    --batch 64 --beam 1 --beam 5 > "$WORK/ours_decode.r$rep.json"
done

"$PY" "$REPO/scripts/bench/report.py" "$WORK" "$STEPS" $DECODE_ONLY
