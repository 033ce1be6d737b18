"""``python -m experiments.imitation [--preset clrp50|clrp100] train | status | report | ...``.

The verbs work on one preset's arms (default clrp50; clrp100 has ``pomo`` and, on a GPU,
``pomo-gpu``).

* ``train --arm pomo|imitation|behind --hours H``: continue an arm (``behind``: the one with fewer
  charged CPU hours, so that repeated calls keep the arms level); one thread, ``nice`` 19,
  resumable, stops cleanly on SIGTERM; ``--device cuda`` for the GPU arms.
* ``status``: one line per arm.
* ``report``: ``results/imitation/<preset>/README.md`` and ``curve.png`` from the curve.
* ``recipes --labels K --recipe LIKELIHOOD,AUGMENT,LR ... [--start shipped|ARM]``: one
  imitation pass per recipe from the same start, x8 after it (:mod:`.recipes`).
* ``heldout --count K``: the start model and each arm's committed weights on the K instances
  after the curve's, paired (:mod:`.heldout`).
* ``average --arm ARM --revisions REV ...``: the mean of the arm's committed weights at those
  commits, evaluated like a point of the curve (:mod:`.average`).
* ``ship --arm ARM --count K [--average] [--jobs 2]``: the arm's weights (or that mean) ship as
  ``drlhq_<preset>`` when they beat the shipped model on those instances (:mod:`.ship`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..training.precision import AUTOCAST_DTYPES
from . import settings


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m experiments.imitation", description=__doc__)
    parser.add_argument(
        "--preset",
        default=next(iter(settings.PRESET_ARMS)),
        choices=tuple(settings.PRESET_ARMS),
        help="the preset whose arms the verb works on (default: %(default)s)",
    )
    verbs = parser.add_subparsers(dest="verb", required=True)
    train = verbs.add_parser("train", help="continue one arm")
    train.add_argument("--arm", default="behind", choices=[*settings.all_arms(), "behind"])
    train.add_argument("--hours", type=float, required=True, help="wall-clock budget")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument(
        "--label-limit",
        type=int,
        default=None,
        help="labels the imitation arm reads when it starts (default: all there are then)",
    )
    train.add_argument("--nice", type=int, default=19)
    train.add_argument("--device", default="cpu", help="cpu, or cuda for the GPU arms")
    train.add_argument("--threads", type=int, default=1)
    train.add_argument(
        "--precision",
        default=None,
        choices=list(AUTOCAST_DTYPES),
        help="the POMO steps' precision (default: float32 on the CPU, bf16 autocast on a GPU "
        "with bf16)",
    )
    train.add_argument(
        "--compile",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="compile the decoder's step of the POMO steps (default: on a CPU with a C++ compiler)",
    )
    verbs.add_parser("status", help="one line per arm")
    verbs.add_parser("report", help="write the report and the plot")
    recipes = verbs.add_parser("recipes", help="one imitation pass per recipe, x8 after it")
    recipes.add_argument("--labels", type=int, required=True, help="the first K labels")
    recipes.add_argument(
        "--recipe",
        action="append",
        required=True,
        help="LIKELIHOOD,AUGMENT,LR, e.g. solution,dihedral,1e-5 (repeat for more)",
    )
    recipes.add_argument("--start", default="shipped", choices=["shipped", *settings.all_arms()])
    heldout = verbs.add_parser("heldout", help="the arms on the instances after the curve's")
    heldout.add_argument("--count", type=int, default=800, help="instances (default: 800)")
    ship = verbs.add_parser("ship", help="ship an arm's weights when they beat the shipped model")
    ship.add_argument("--arm", required=True, choices=settings.all_arms())
    ship.add_argument("--count", type=int, default=800, help="held-out instances (default: 800)")
    ship.add_argument("--average", action="store_true", help="ship the arm's written average")
    ship.add_argument(
        "--jobs",
        type=int,
        choices=(1, 2),
        default=1,
        help="decode the two models one after the other (1, the default) or side by side (2)",
    )
    average = verbs.add_parser("average", help="the mean of an arm's weights at some commits")
    average.add_argument("--arm", required=True, choices=settings.all_arms())
    average.add_argument(
        "--revisions", nargs="+", required=True, help="the arm's commits, oldest first"
    )
    average.add_argument("--replace", action="store_true", help="replace a written average")
    return parser


def load_states(report_dir: Path | None = None) -> dict:
    """The committed state of each arm of the preset (None where it has none)."""
    report_dir = report_dir or settings.REPORT_DIR
    from .state import committed_arm

    states = {}
    for arm in settings.preset_arms():
        loaded = committed_arm(report_dir, arm)
        states[arm] = None if loaded is None else loaded[0]
    return states


def behind_arm(states: dict) -> str:
    """The CPU arm of ``states`` with the fewest charged CPU hours (a missing arm first; ties:
    the first arm in :func:`.settings.preset_arms` order); the GPU arms
    (:data:`.settings.GPU_ARMS`) are never behind: their hours are GPU hours."""
    return min(
        [arm for arm in settings.preset_arms() if arm in states and arm not in settings.GPU_ARMS],
        key=lambda arm: -1.0 if states[arm] is None else states[arm].charged_cpu_hours,
    )


def _leader_branches() -> str:
    """One clause per arm of the preset in use that branches from a leader arm and trains with
    the leader reward (:data:`.settings.BRANCHES`, :data:`.settings.LEADER_WEIGHTS`), in the
    preset's arm order, joined by semicolons: how it trains (:func:`.ship.branch_clause`) and
    the control going on beside it (:data:`.settings.CONTROLS`), if any."""
    from .ship import branch_clause

    clauses = []
    for arm in settings.preset_arms():
        parent = settings.BRANCHES.get(arm)
        if arm not in settings.LEADER_WEIGHTS or parent not in settings.LEADER_WEIGHTS:
            continue
        control = settings.CONTROLS.get(arm)
        clauses.append(
            f"`{arm}` from `{parent}`'s state: {branch_clause(arm)}"
            + (f", `{control}` going on beside it as its control" if control else "")
        )
    return "; ".join(clauses)


def _intro() -> list[str]:
    """The report's title, recipe and commands, for the preset in use."""
    flag = settings.preset_flag()  # empty for the default preset
    evaluation = (
        f"Every {settings.eval_every_cpu_hours():g} CPU hours of training, dihedral x8 "
        f"multistart greedy on the first {settings.EVAL_SIZE} instances of the paper's "
        f"{settings.PRESET} test set (`experiments/paper_sets.py`); the evaluations' CPU time is "
        "not charged. CPU hours are one thread's process time, which buys fewer training steps "
        "when other work shares the core (compare the arms' POMO instances per CPU hour below). "
        "POMO steps train in float32 on the CPU and under bf16 autocast on a GPU with bf16 "
        "(`--precision`; weights and Adam in float32, evaluations in float32); a state's "
        "`hardware` names the precision of its mixed-precision calls (a GPU call that names "
        "none trained in float32) and `compiled decoder` where the POMO steps ran the decoder's "
        "step compiled (`--compile`, on a CPU with a C++ compiler by default; evaluations "
        "eager)."
    )
    pomo = f"POMO (batch {settings.POMO_BATCH}, Adam {settings.POMO_LR:g})"
    if flag:
        recipe = (
            f"The `pomo` arm starts from `{settings.START_NAME}` as shipped when it began "
            f"(`{settings.START_MODEL}`) and continues RL4CO's {pomo} on freshly drawn "
            f"{settings.PRESET} instances; `pomo-gpu` branches from its committed state on a GPU "
            f"(`--device cuda`, {settings.pomo_batch('pomo-gpu')} instances a step; its hours are "
            f"GPU hours, so its points stand at its parent's CPU hours); `pomo-leader` branches "
            f"from it on one CPU thread at the same rate with the leader reward (the best start's "
            f"advantage times {settings.LEADER_WEIGHTS['pomo-leader']:g}, "
            "`clrp_rl4co.models.LeaderRewardPOMO`), the `pomo` arm going on beside it as its "
            f"control; `pomo-slow` branches from it with Adam {settings.pomo_lr('pomo-slow'):g}, "
            f"`pomo-slower` from `pomo-slow`'s with {settings.pomo_lr('pomo-slower'):g}, and "
            f"`leader` from `pomo-slow`'s at its rate ({settings.pomo_lr('leader'):g}) with the "
            f"leader reward (times {settings.LEADER_WEIGHTS['leader']:g}), the `pomo-slow` arm "
            f"going on beside it as its control; {_leader_branches()}. {evaluation}"
        )
    else:
        plural = "es" if settings.IMITATION_EPOCHS != 1 else ""
        recipe = (
            f"Both arms start from `{settings.START_NAME}` as shipped when they began "
            f"(`{settings.START_MODEL}`). `pomo` continues RL4CO's {pomo}; `imitation` is "
            "charged the CPU time of its expert labels (PyVRP, `python -m experiments.labels "
            f"make`), trains {settings.IMITATION_EPOCHS} pass{plural} over them by imitation "
            f"(likelihood `{settings.IMITATION_LIKELIHOOD}`, batch {settings.IMITATION_BATCH}, "
            f"Adam {settings.IMITATION_LR:g}), then the same POMO. {evaluation} "
            f"`pomo16` is the same POMO with {settings.POMO_STARTS['pomo16']} starts per "
            "instance; `pomo-slow` branches from the `pomo` arm's committed state (its curve "
            f"continues the `pomo` arm's hours) with Adam {settings.pomo_lr('pomo-slow'):g}, "
            f"`pomo-slower` from `pomo-slow`'s with {settings.pomo_lr('pomo-slower'):g}; "
            "`pomo-gpu` and `pomo-gpu-slow` from `pomo-slow`'s on a GPU (`--device cuda`) with "
            f"{settings.pomo_batch('pomo-gpu')} instances a step and Adam "
            f"{settings.pomo_lr('pomo-gpu'):g} / {settings.pomo_lr('pomo-gpu-slow'):g}: their "
            "hours are GPU hours, so their points stand at their parent's CPU hours; `wide` is "
            "the paper's model size (256-d, 6 layers, 16 heads) from scratch on a GPU, with "
            f"{settings.pomo_batch('wide')} instances a step and Adam "
            f"{settings.pomo_lr('wide'):g}; `leader` from `pomo-gpu-slow`'s (the shipped "
            f"weights) on one CPU thread with Adam {settings.pomo_lr('leader'):g} and the "
            "leader reward (the best start's advantage times "
            f"{settings.LEADER_WEIGHTS['leader']:g}, `clrp_rl4co.models.LeaderRewardPOMO`), and "
            f"its control `pomo-cpu-slow` the same with POMO's own loss; {_leader_branches()}."
        )
    return [
        f"# Imitation against POMO at equal CPU hours ({settings.PRESET})",
        "",
        recipe,
        "",
        "```bash",
        f"python -m experiments.imitation{flag} train --hours 2   # the arm behind; resumable",
        f"python -m experiments.imitation{flag} report",
        "```",
        "",
    ]


def write_report(report_dir: Path | None = None) -> Path:
    """Write ``README.md`` (recipe, commands, the arms' table and comparison) and the plot."""
    report_dir = report_dir or settings.REPORT_DIR
    from ..campaign.settings import reference_lines
    from .curve import CURVE_PNG, REPORT, read_points, report_lines, write_curve_png
    from .heldout import HELDOUT_MD
    from .outlook import outlook_lines, start_instances
    from .recipes import RECIPES_MD
    from .ship import SHIP_MD

    states = load_states(report_dir)
    targets = dict(sorted(reference_lines(settings.PRESET).items(), key=lambda kv: -kv[1]))
    outlook = outlook_lines(read_points(report_dir), targets, start_instances())
    write_curve_png(report_dir)
    text = [
        *_intro(),
        *report_lines(report_dir, states),
        "",
        f"![curve]({CURVE_PNG})",
        "",
        *([*outlook, ""] if outlook else []),
        "Per arm: `<arm>/state.json` (counters, commits, commands, hardware) and "
        "`<arm>/weights.pt`; every evaluation: `curve.csv`.",
    ]
    if (report_dir / RECIPES_MD).is_file():
        text += [
            "",
            f"What one imitation pass does to the start, recipe by recipe: [{RECIPES_MD}]"
            f"({RECIPES_MD}) (`python -m experiments.imitation recipes`).",
        ]
    if (report_dir / HELDOUT_MD).is_file():
        text += [
            "",
            f"The start and the arms' committed weights on instances the curve never decodes: "
            f"[{HELDOUT_MD}]({HELDOUT_MD}) (`python -m experiments.imitation heldout`).",
        ]
    if (report_dir / SHIP_MD).is_file():
        text += [
            "",
            "Every check of an arm against the shipped model on those instances, and what "
            f"shipped: [{SHIP_MD}]({SHIP_MD}) "
            f"(`python -m experiments.imitation{settings.preset_flag()} ship`).",
        ]
    path = report_dir / REPORT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text) + "\n")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings.use_preset(args.preset)
    if args.verb == "train":
        from ..background import log_to_stdout
        from .loop import ArmOptions, train

        log_to_stdout()
        arm = behind_arm(load_states()) if args.arm == "behind" else args.arm
        state = train(
            ArmOptions(
                arm=arm,
                hours=args.hours,
                seed=args.seed,
                label_limit=args.label_limit,
                nice=args.nice,
                device=args.device,
                threads=args.threads,
                precision=args.precision,
                compile=args.compile,
            )
        )
        write_report()
        print(f"{arm}: {state.charged_cpu_hours:.3f} CPU h charged, {state.phase} phase")
    elif args.verb == "status":
        for arm, state in load_states().items():
            if state is None:
                print(f"{arm}: not started")
            else:
                x8 = (state.last_validation or {}).get("x8")
                print(
                    f"{arm}: {state.charged_cpu_hours:.3f} CPU h charged "
                    f"({state.label_cpu_hours:.3f} labels), {state.phase} phase, "
                    f"x8 {x8 if x8 is None else round(x8, 4)}"
                )
    elif args.verb == "recipes":
        import torch

        from ..training.imitation_pass import Recipe
        from .recipes import run_recipes, write_recipes_report

        if args.labels < 1:
            raise SystemExit(f"--labels: need at least 1, got {args.labels}")
        try:
            recipes = [Recipe.parse(text) for text in args.recipe]
        except ValueError as exc:
            raise SystemExit(f"--recipe: {exc}") from None
        torch.set_num_threads(1)
        for row in run_recipes(recipes, args.labels, start=args.start):
            print(
                f"{row['start']} {row['likelihood']},{row['augment']},{row['lr']:g}: "
                f"x8 {row['x8']:.4f} after {row['steps']} steps "
                f"({row['train_cpu_hours']:.3f} CPU h)"
            )
        print(write_recipes_report())
    elif args.verb == "heldout":
        import torch

        from .heldout import write_heldout

        torch.set_num_threads(1)
        try:
            print(write_heldout(args.count))
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
    elif args.verb == "ship":
        import torch

        from .ship import ship

        torch.set_num_threads(1)
        try:
            print(ship(args.arm, args.count, average=args.average, jobs=args.jobs))
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
    elif args.verb == "average":
        import torch

        from .average import average, hours_list

        torch.set_num_threads(1)
        try:
            sources = average(args.arm, args.revisions, replace=args.replace)
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
        hours = hours_list(sources["cpu_hours"])
        print(f"{args.arm}: the mean of its weights at {hours} CPU h: x8 {sources['x8']:.4f}")
    else:
        print(write_report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
