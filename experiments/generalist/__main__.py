"""``python -m experiments.generalist [--run plain|bias] train | status | report | ship | ...``.

``--run bias`` works on the run with the size-aware distance bias, which branches from the plain
run's committed state (:data:`.settings.RUNS`); every verb then reads and writes its folders.

* ``train --hours H``: continue the run for H hours of wall time (one thread, ``nice`` 19;
  ``--device cuda`` continues the same run on a GPU), then write the state back.
* ``status``: one line (CPU hours, instances, last validation, targets, instances to each).
* ``report``: the targets, every OOD family's gap and trend, the hours to each target and the
  curve, written to ``results/ood/generalist.md`` (``--out`` another folder).
* ``ship``: compare the run's weights with the shipped generalist on the validation sets and
  the paper's clrp50 test set; ship them as ``drlhqcf_mixed`` when they are better.
* ``imitate --labels DIR --recipe LIKELIHOOD,AUGMENT,LR``: one imitation pass over expert labels
  from the committed weights, validated as the run validates (``results/generalist/imitation.md``;
  ``--save PATH`` keeps the weights for ``train --init`` or ``run.py init=``).
* ``public-trend FILES --bks CSV``: x8 of every committed state on public benchmark files,
  and the trend of the mean gap to the best-known values (``results/ood/generalist_public.md``).
* ``throughput``: training instances per second of the candidate model sizes, side by side.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..background import log_to_stdout
from ..training.precision import AUTOCAST_DTYPES
from . import settings


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m experiments.generalist", description=__doc__)
    parser.add_argument(
        "--run",
        default=settings.RUN,
        choices=settings.RUNS,
        help="plain, or bias: the run with the distance bias (default: %(default)s)",
    )
    verbs = parser.add_subparsers(dest="verb", required=True)
    train = verbs.add_parser("train", help="continue the run for --hours of wall time")
    train.add_argument("--hours", type=float, required=True)
    train.add_argument("--device", default="cpu")
    train.add_argument("--threads", type=int, default=1)
    train.add_argument("--nice", type=int, default=19)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument(
        "--batch-scale", type=int, default=1, help="multiply the batch rule (GPU: 8)"
    )
    train.add_argument(
        "--validate-every", type=int, default=settings.VALIDATE_EVERY,
        help="training instances between validations",
    )  # fmt: skip
    train.add_argument("--init", default=None, help="start a fresh run from this policy")
    train.add_argument("--init-instances", type=int, default=None)
    train.add_argument(
        "--precision",
        default=None,
        choices=list(AUTOCAST_DTYPES),
        help="the training steps' precision (default: float32 on the CPU, bf16 autocast on a "
        "GPU with bf16)",
    )
    verbs.add_parser("status", help="one line: where the run stands")
    report = verbs.add_parser("report", help="write results/ood/generalist.md (targets, trend)")
    report.add_argument("--out", type=Path, default=None, help="default: " + OUT_HELP)
    ship = verbs.add_parser("ship", help="ship the run's weights if they beat the shipped model")
    ship.add_argument("--paper-instances", type=int, default=200)
    imitate = verbs.add_parser("imitate", help="one imitation pass from the committed weights")
    imitate.add_argument("--labels", type=Path, required=True, help="a labels folder")
    imitate.add_argument("--recipe", required=True, help="LIKELIHOOD,AUGMENT,LR")
    imitate.add_argument("--limit", type=int, default=None, help="the first K labels")
    imitate.add_argument("--seed", type=int, default=0)
    imitate.add_argument("--save", type=Path, default=None, help="write the weights as a policy")
    public = verbs.add_parser(
        "public-trend", help="x8 of every committed state on public files; trend to a gap target"
    )
    public.add_argument("files", nargs="+", type=Path, help="instance files (Prodhon, .json)")
    public.add_argument("--bks", type=Path, required=True, help="CSV with columns file,bks")
    public.add_argument("--target", type=float, default=None,
                        help="mean gap target, percent (default 15)")  # fmt: skip
    public.add_argument("--out", type=Path, default=None, help="default: " + OUT_HELP)
    through = verbs.add_parser("throughput", help="instances/s of the candidate model sizes")
    through.add_argument("--seconds", type=float, default=60.0)
    through.add_argument("--sizes", nargs="+", type=int, default=[50, 100])
    return parser


OUT_HELP = "results/ood for the plain run, the run's report folder for the others"


def _out(out: Path | None) -> Path:
    """Where ``report`` and ``public-trend`` write: ``out``, else :data:`OUT_HELP`."""
    if out is not None:
        return out
    return settings.OOD_DIR if settings.RUN == "plain" else settings.REPORT_DIR


def _command(argv: Sequence[str] | None) -> str:
    """This call's command line, as the results record it."""
    return "python -m experiments.generalist " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings.use_run(args.run)
    log_to_stdout()
    if args.verb == "train":
        from .loop import TrainOptions, train

        options = TrainOptions(
            hours=args.hours,
            device=args.device,
            threads=args.threads,
            nice=args.nice,
            seed=args.seed,
            batch_scale=args.batch_scale,
            validate_every=args.validate_every,
            init=args.init,
            init_instances=args.init_instances,
            precision=args.precision,
            state_dir=settings.STATE_DIR,
            work_dir=settings.WORK_DIR,
            report_dir=settings.REPORT_DIR,
        )
        state = train(options)
        from .report import read_curve, status_line

        print(status_line(state, read_curve(settings.REPORT_DIR)))
    elif args.verb == "status":
        from ..training.state import load_committed
        from .report import read_curve, status_line

        committed = load_committed(settings.STATE_DIR)
        print(status_line(committed[0] if committed else None, read_curve(settings.REPORT_DIR)))
    elif args.verb == "report":
        from ..training.state import load_committed
        from .outlook import write_ood_report
        from .report import read_curve

        committed = load_committed(settings.STATE_DIR)
        if committed is None:
            print(f"no committed state in {settings.STATE_DIR}", file=sys.stderr)
            return 1
        print(write_ood_report(committed[0], read_curve(settings.REPORT_DIR),
                               settings.REPORT_DIR, _out(args.out)))  # fmt: skip
    elif args.verb == "ship":
        from .ship import ship

        print(ship(paper_instances=args.paper_instances))
    elif args.verb == "imitate":
        from .imitate import imitate

        command = _command(argv)
        print(imitate(args.labels, args.recipe, args.limit, args.seed, args.save,
                      command=command))  # fmt: skip
    elif args.verb == "public-trend":
        from clrp_rl4co.data.bks import BestKnown
        from clrp_rl4co.reporting.provenance import commit_line

        from .public_trend import GAP_TARGET, measure, state_history, write_report

        commit = commit_line()  # the code this call runs, before it writes anything
        history = state_history(settings.REPO)
        rows = measure(history, list(args.files), BestKnown.read(args.bks))
        command = _command(argv)
        target = GAP_TARGET if args.target is None else args.target
        print(write_report(rows, history[-1].state, _out(args.out), command, target, commit))
    elif args.verb == "throughput":
        from .throughput import measure

        for line in measure(seconds=args.seconds, sizes=args.sizes):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
