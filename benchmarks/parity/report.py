"""The parity report: ``curves.csv``, ``curves.png``, ``summary.json`` and ``README.md`` in
``--out``."""

from __future__ import annotations

import json

from clrp_rl4co.reporting import provenance
from clrp_rl4co.reporting.markdown import markdown_table

from .config import CONFIG, IMPLEMENTATIONS
from .curves import merge_curves, plot_curves, read_curves, summarize, verdict, write_curves
from .fetch import checkout_commit
from .official import official_run_dir
from .ours import instance_check, ours_checkpoints, ours_run_dir

#: What the official training code does differently from this package's (read from its
#: ``LRP_Model.py``, ``LRP_EnvTrain.py``, ``LRP_Trainer.py``, ``LRP_Evaluator.py``).
DIFFERENCES = [
    "Training reward on the normalised coordinates: the official training env computes route "
    "lengths on the min-max normalised coordinates (the longer side of the bounding box scaled "
    "to 1), so on the unit-square distribution distances weigh about 1/0.95 more against the "
    "fixed costs than in the true objective; ours trains on the true objective (raw "
    "coordinates). Its evaluator uses the raw coordinates, as ours.",
    "Padding steps in the loss: a finished official trajectory keeps stepping until the whole "
    "batch is done, with every depot unmasked, and the log-probabilities of these sampled "
    "depot moves (which cost nothing) enter its REINFORCE sum, i.e. noise in the gradient; "
    "ours (RL4CO) pads finished instances with a one-hot mask (log-probability 0).",
    "Vehicle-load feature of the routing query: the official uses the vehicle's remaining load "
    "(1 after leaving a depot, the depot's remaining capacity is only a mask); ours uses "
    "min(q, remaining depot capacity) / q, the load the vehicle can actually still deliver.",
    "Pointer: official logits are the glimpse times the node embeddings themselves (POMO "
    "style); ours (RL4CO's attention decoder) project the node embeddings with a separate "
    "learned logit key. Encoder attention projections: official without bias, RL4CO's with.",
    "First decoding step: the official uses its routing-query form with a learned node "
    "placeholder, the graph mean and a learned load placeholder; ours uses the location-query "
    "form with learned placeholders for the last node and the last route (no graph mean).",
    "Start scheme: official step 1 is a depot sampled by the policy, step 2 the start "
    "customer forced; ours: the start customer is fixed first and the policy then picks its "
    "depot among those that can hold it (on these presets every depot can). Equivalent "
    "decisions, the same N = 20 starts and the same shared (mean over starts) baseline.",
    "Gradient clipping: none in the official trainer; ours clips the gradient norm at 1.0 "
    "(configs/trainer/default.yaml). Both: Adam, lr 1e-4, weight decay 1e-6 (L2), fp32.",
    "Validation: the official trainer has none (it keeps the checkpoint with the best training "
    "score); here both sides' per-epoch checkpoints are evaluated afterwards. Its evaluator's "
    "'score without aug' is the best of the first D starts only; with augmentation None its "
    "'score with aug' is the best of all N starts, the multistart greedy used here.",
]


def train_seconds(args) -> dict[str, float]:
    """Wall seconds of training per run: the official runs' per-epoch log, our runs' totals
    kept in their checkpoints (``ProgressLog``, validation included)."""
    out: dict[str, float] = {}
    for seed in args.seeds:
        log = official_run_dir(args, seed) / "epochs.jsonl"
        if log.is_file():
            lines = log.read_text().splitlines()
            out[f"official seed {seed}"] = sum(json.loads(x)["seconds"] for x in lines)
        ckpts = ours_checkpoints(ours_run_dir(args, seed))
        if ckpts:
            import torch

            from clrp_rl4co.models.curves import ProgressLog

            ckpt = torch.load(ckpts[max(ckpts)], map_location="cpu", weights_only=False)
            progress = ProgressLog.from_checkpoint(ckpt)
            if progress:
                out[f"ours seed {seed}"] = float(progress["seconds"])
    return out


def _table(rows: list[dict]) -> str:
    """Objective per instances seen: every run, each side's mean over its seeds, the
    difference."""
    runs = sorted({(r["implementation"], r["seed"]) for r in rows})
    value = {
        (r["implementation"], r["seed"], r["instances_seen"]): r["val_objective"] for r in rows
    }
    head = ["instances seen", *[f"{impl} seed {seed}" for impl, seed in runs]]
    head += ["official mean", "ours mean", "ours - official"]
    table = []
    for n in sorted({r["instances_seen"] for r in rows}):
        cells = [f"{n:,}"]
        cells += [f"{value[(i, s, n)]:.4f}" if (i, s, n) in value else "" for i, s in runs]
        means = {}
        for impl in IMPLEMENTATIONS:
            seeds = sorted({s for i, s in runs if i == impl})
            vals = [value[(impl, s, n)] for s in seeds if (impl, s, n) in value]
            means[impl] = sum(vals) / len(vals) if seeds and len(vals) == len(seeds) else None
            cells.append(f"{means[impl]:.4f}" if means[impl] is not None else "")
        both = None not in means.values()
        cells.append(f"{means['ours'] - means['official']:+.4f}" if both else "")
        table.append(cells)
    return markdown_table(head, table)


def _machine() -> str:
    return (
        f"{provenance.machine()}, {provenance.software()}; load average at report time "
        f"{provenance.load_average()} (on a shared machine times are upper bounds)"
    )


def write_readme(args, summary: dict, rows: list[dict]) -> None:
    v = summary["verdict"]
    c = CONFIG
    cmd = (
        f"python -m benchmarks.parity --seeds {' '.join(map(str, args.seeds))} "
        f"--instances {args.instances} --chunk {args.chunk} --eval-size {args.eval_size}"
    )
    diff = summary["instance_max_abs_diff"]
    lines = [
        "# Parity with the official DRLHQ code (clrp20, CPU)",
        "",
        "Written by `python -m benchmarks.parity` (do not edit by hand; rerun it). The "
        "official code (`JackeyMiao/DRLHQ`, no licence file) is cloned at run time into the "
        "work folder (`--work`, default `runs/parity/`) and runs from there; nothing of it is "
        "in this repository.",
        "",
        "```bash",
        cmd,
        "```",
        "",
        f"**Configuration (both sides).** clrp20 (5 depots, 20 customers, the paper's "
        f"distribution), {c['embed_dim']}-d, {c['num_encoder_layers']} encoder layers, "
        f"{c['num_heads']} heads, feed-forward {c['feedforward_hidden']}, tanh clipping "
        f"{c['tanh_clipping']}; POMO with N = 20 starts (one per customer) and the shared "
        f"mean-over-starts baseline; batch {c['batch_size']}, Adam lr {c['lr']:g}, weight "
        f"decay {c['weight_decay']:g}, no learning-rate decay; {args.instances:,} training "
        f"instances per run, a checkpoint every {args.chunk:,}; seeds "
        f"{', '.join(map(str, args.seeds))}; one CPU thread. Everything else is each "
        "side's default (see the differences below).",
        "",
        f"**Evaluation (both sides).** The first {args.eval_size} instances of the paper's "
        "clrp20 test set, multistart greedy (best of the 20 starts), no augmentation: "
        "official checkpoints with the official evaluator on its `data/5_20_1000.pkl`, ours "
        "with `decode_batch(..., 'multistart_greedy')` on "
        "`datasets/drlhq_clrp20_test_1000_seed1234.npz`; largest absolute difference between "
        f"the two files' instances: {diff if diff is not None else 'not checked yet'}.",
        "",
        f"**Machine.** {_machine()}.",
        "",
        "**Training wall time** (seconds): "
        + ", ".join(f"{k} {sec:.0f}" for k, sec in sorted(summary["train_seconds"].items()))
        + ".",
        "",
        "![curves](curves.png)",
        "",
        _table(rows),
        "",
    ]
    if v is None:
        lines.append("**Conclusion.** Not yet: both implementations need a common point.")
    else:
        word = "no worse than" if v["no_worse"] else "worse than"
        seeds = ", ".join(map(str, v["seeds_compared"]))
        lines.append(
            f"**Conclusion.** Over the {v['points']} checkpoints both reached (seeds {seeds}; "
            f"means over these seeds), ours minus official averages "
            f"{v['mean_difference_over_points']:+.4f}, against a seed noise (per checkpoint the "
            f"larger seed range of the two implementations, averaged) of {v['seed_noise']:.4f}; "
            f"at {v['instances_seen']:,} instances ours {v['ours_mean']:.4f}, official "
            f"{v['official_mean']:.4f} ({v['ours_minus_official_last']:+.4f}). By this rule "
            f"ours is {word} the official implementation at equal instances seen."
            + (
                " Pending: the two implementations do not have the same seeds yet (a run is "
                "still training); rerun the command to complete it."
                if v["pending"]
                else ""
            )
        )
    lines += ["", "## What the official code does differently", ""]
    lines += [f"- {d}" for d in DIFFERENCES]
    (args.out / "README.md").write_text("\n".join(lines) + "\n")


def report(args, rows: list[dict]) -> dict:
    args.out.mkdir(parents=True, exist_ok=True)
    csv_path = args.out / "curves.csv"
    rows = merge_curves(read_curves(csv_path), rows)
    write_curves(csv_path, rows)
    plot_curves(
        rows,
        args.out / "curves.png",
        f"DRLHQ clrp20, {CONFIG['embed_dim']}-d / {CONFIG['num_encoder_layers']} layers, "
        f"batch {CONFIG['batch_size']}, lr {CONFIG['lr']:g}; first {args.eval_size} of the "
        "paper's test set",
    )
    recorded = ["seeds", "instances", "chunk", "eval_size", "eval_batch", "ours_val_size"]
    recorded.append("threads")
    summary = {"config": CONFIG, "args": {k: getattr(args, k) for k in recorded}}
    official = getattr(args, "official", None)
    summary["official_commit"] = checkout_commit(official) if official else None
    summary["curves"] = summarize(rows)
    summary["instance_max_abs_diff"] = instance_check(args)
    summary["train_seconds"] = train_seconds(args)
    summary["verdict"] = verdict(rows)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    write_readme(args, summary, rows)
    print(json.dumps(summary["verdict"], indent=1, default=str), flush=True)
    return summary
