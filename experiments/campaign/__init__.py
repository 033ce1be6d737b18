"""A resumable training campaign that continues the shipped DRLHQ models on one GPU.

    python -m experiments.campaign run --minutes 60 --out DIR   # train every preset for 60 min
    python -m experiments.campaign apply DIR                    # ship what improved, record it
    python -m experiments.campaign status                       # where each preset stands
    python -m experiments.campaign init                         # state files + validation sets
    python -m experiments.campaign run --minutes 50 --generalist-minutes 10 --out DIR

``--generalist-minutes`` adds the generalist track (:mod:`.generalist`): the resumable
generalist run of :mod:`experiments.generalist` continues on the same device after the presets,
in ``<out>/generalist/``; ``apply`` brings its state back when it is ahead.

**Run** (:mod:`.session`) continues the training of every preset (clrp10 / 20 / 50 / 100) for
``--minutes`` of wall time in one process tree, through the package's one training path
(:func:`clrp_rl4co.models.training.train`, i.e. ``python run.py ...`` with Hydra overrides): POMO
with the shared baseline, Adam, precision from
:func:`clrp_rl4co.models.training.training_precision` (bf16 autocast on GPUs that support it,
fp32 on CPU; env costs stay float). What the campaign adds is
:class:`.callback.CampaignCallback`: it validates on the campaign's fixed validation set
(:data:`.settings.CAMPAIGN_VAL_SEED`, decode :data:`.settings.VAL_DECODE`) at the start (the
shipped model and the start weights), every ``--val-every`` seconds and at the end; keeps the
best validated weights; stops at the planned time; and after every validation writes
``<out>/<track>.tar`` atomically, so a run stopped at any moment loses at most the work since its
last validation.

**Resume scheme** (:mod:`.state`). Per track (``<preset>``, or ``<preset>_<size>`` for another
model size) the committed folder ``results/training/campaign/<track>/`` holds ``state.json``
(cumulative training instances of the weights in hand, where the learning-rate schedule stands,
the latest validation, every session), ``curve.csv`` / ``curve.png`` and, when the campaign's
latest weights were not shipped, ``resume.pt`` + ``resume.json``. A session starts from
``resume.pt`` if the state says so, else from the shipped model
``clrp_rl4co/pretrained/drlhq_<preset>`` (or a fresh policy of the chosen size), **with a fresh
Adam optimizer**: the weights are kept, the optimizer moments are not (they would triple the
committed files); Adam's bias-corrected first steps are about the size of the learning rate,
which may show as a short bump in the curve. The learning rate follows the paper's schedule
counted in training instances (``configs/model/base.yaml``: 1e-4, x0.1 after ``decay_at`` of the
paper's 10 million instances), constant within a session. Each session draws its training data
with its own seed (:data:`.settings.TRAIN_SEED_BASE` + the number of earlier sessions).

**What is kept** (:mod:`.apply`). A session's candidate is its best validated weights
(validations after the start that beat the start's own value; none if none does, and the
state's weights then stay where they were). ``apply`` ships the candidate as
``drlhq_<preset>`` (:func:`clrp_rl4co.models.shipping.ship_policy`, provenance: commands, seeds,
cumulative instances, hardware, wall minutes, validation) only if its value is lower than the
shipped model's value measured in the same session on the same set, and the shipped file is
still the one measured; otherwise it keeps the candidate as ``resume.pt``. So each session adds
at most one weights file (about 2.9 MB at 128-d) per preset to the repository.

**Minute split** (:mod:`.schedule`). The training window is split by the relative gap of each
preset's latest validation value to the paper's DRLHQ x8 figure
(:func:`.schedule.minute_shares`: a floor each, the rest in proportion to the gaps). On a GPU
all presets start together and the ones with smaller shares stop earlier
(:func:`.schedule.shared_durations`: with equal time slices each process then gets its share of
GPU time); on a CPU they run one after the other.

**The output folder** holds ``<track>.tar`` per track (``session.json``, ``weights.pt`` /
``.json`` once a validation improved, the tail of ``train.log``) and ``campaign.json`` (the
plan and each track's result).
"""
