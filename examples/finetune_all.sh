#!/usr/bin/env bash
# Fine-tune the same-budget clrp20 DRLHQ model (drlhq_clrp20_samebudget) on clrp10, clrp20,
# clrp50 and clrp100 at once, one `python run.py` process per preset sharing one GPU (on an H200
# the four kept it at 99% utilisation with about 26 GB of memory).
#
#   bash examples/finetune_all.sh OUT_DIR MINUTES [PYTHON]
#
# Each run stops cleanly after MINUTES of training (trainer.max_time), then writes the run folder
# OUT_DIR/<preset>/ (policy_best.{pt,json}, csv/metrics.csv, learning_curve.png, ...) and
# OUT_DIR/<preset>.log. Continue a run: the same command with ckpt_path=last and a larger
# max_time. Ship one: python -m clrp_rl4co.models.shipping OUT_DIR/<preset> <name>.
# Seed 0, POMO with the shared baseline, Adam 1e-4, fp32, validation without augmentation. Batch
# sizes and validation sets are chosen for one large GPU (tested on an H200).
set -u
out=${1:?OUT_DIR}
minutes=${2:?MINUTES}
python=${3:-python}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"

run() {  # preset batch train_size val_size
    local preset=$1 batch=$2 train_size=$3 val_size=$4
    "$python" "$root/run.py" model=drlhq env.generator_params.preset="$preset" \
        init=drlhq_clrp20_samebudget model.batch_size="$batch" \
        model.train_data_size="$train_size" model.val_data_size="$val_size" \
        model.val_batch_size="$val_size" model.num_augment=1 trainer.max_epochs=1000 \
        "trainer.max_time={minutes:$minutes}" trainer.devices=1 trainer.precision=32-true \
        trainer.enable_progress_bar=false callbacks.latest_checkpoint.every_n_train_steps=1000000 \
        seed=0 paths.log_dir="$out" run_name="$preset" > "$out/$preset.log" 2>&1
    echo "$preset exit $?"
}

run clrp10 512 30720 500 &
run clrp20 512 20480 500 &
run clrp50 256 6400 200 &
run clrp100 128 1920 100 &
wait
