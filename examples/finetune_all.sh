#!/usr/bin/env bash
# Fine-tune the same-budget clrp20 DRLHQ model (drlhq_clrp20_samebudget) on clrp10, clrp20,
# clrp50 and clrp100 at once, one process per preset sharing one GPU (on an H200 the four kept it
# at 99% utilisation with about 26 GB of memory).
#
#   bash examples/finetune_all.sh OUT_DIR MINUTES [PYTHON]
#
# Each run stops cleanly after MINUTES of training (Lightning max_time), then writes
# OUT_DIR/<preset>/policy_best.{pt,json}, csv/metrics.csv, learning_curve.png and train.log.
# Ship a run with examples/ship_model.py. Seed 0, POMO with the shared baseline, Adam 1e-4,
# fp32. Batch sizes and validation sets are chosen for one large GPU (tested on an H200).
set -u
out=${1:?OUT_DIR}
minutes=${2:?MINUTES}
python=${3:-python}
mkdir -p "$out"

run() {  # preset batch train_size val_size
    local preset=$1 batch=$2 train_size=$3 val_size=$4
    "$python" examples/train.py --preset "$preset" --model drlhq --init drlhq_clrp20_samebudget \
        --batch-size "$batch" --train-size "$train_size" --epochs 1000 \
        --val-size "$val_size" --val-batch-size "$val_size" --precision 32-true \
        --max-time "$minutes" --ckpt-every 1000000 --seed 0 --no-progress-bar \
        --out "$out/$preset" > "$out/$preset.log" 2>&1
    echo "$preset exit $?"
}

run clrp10 512 30720 500 &
run clrp20 512 20480 500 &
run clrp50 256 6400 200 &
run clrp100 128 1920 100 &
wait
