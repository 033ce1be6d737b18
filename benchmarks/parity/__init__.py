"""Parity with the official DRLHQ code: both trainings at one budget, one evaluation.

Trains DRLHQ with the DRLHQ repository's own training code (``JackeyMiao/DRLHQ``,
``LRP_Trainer.LRPTrainer``; cloned at run time into ``--work``, or an existing checkout given
with ``--official``, never copied into this repository) and with this package's training
(``python run.py``), at the same model size, batch size, learning rate, POMO size (one start
per customer) and number of training instances, for each seed; then evaluates every saved
checkpoint of both on the same instances, the first ``--eval-size`` of the paper's clrp20 test
set, with multistart greedy decoding (one greedy rollout per start, best kept, no
augmentation):

- the official checkpoints with the official evaluator (``LRP_Evaluator._test_one_batch`` on
  the repository's ``data/5_20_1000.pkl``, ``augmentation`` None, ``sample_size`` = N), run in
  the official code's folder (:mod:`.official`, scripts in ``glue/``);
- this package's checkpoints with :func:`clrp_rl4co.models.decode_batch` (``multistart_greedy``)
  on ``datasets/drlhq_clrp20_test_1000_seed1234.npz`` (the same instances regenerated; the
  report compares them with the pickle's and records the largest difference) (:mod:`.ours`).

Every stage resumes: the official runs from their newest ``checkpoint-<epoch>.pt`` (with the
RNG state of that epoch), ours from ``last.ckpt`` / ``latest.ckpt`` (``ckpt_path=last``);
evaluations are cached per checkpoint. One process at a time (``--threads`` each).

    python -m benchmarks.parity --seeds 0 1       # --pythonpath DIR: what the official code
                                                  # imports besides torch (pandas, pytz)

Writes ``--out`` (default ``results/parity/``, :mod:`.report`): ``curves.csv``
(implementation, seed, instances_seen, val_objective, eval_instances), ``curves.png``,
``summary.json`` and ``README.md``.
"""
