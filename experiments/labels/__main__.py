"""``python -m experiments.labels make | status | verify``.

* ``make --preset P --iterations K --hours H``: label instances of preset P with PyVRP at K
  iterations each (deterministic; or ``--seconds S`` of wall time each) for H hours (one
  thread, ``nice`` 19; resumes the last unfinished shard; SIGTERM or Ctrl-C stops after the
  instance in progress and saves).
* ``status``: per preset, shards, labels, CPU hours spent and the mean objective.
* ``verify``: every shard's checksum, and every label replayed through ``CLRPEnv`` to its
  stored objective.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from ..background import log_to_stdout
from .make import LABELS_DIR, SHARD_SIZE, MakeOptions, make_labels
from .shards import PRESET_SEEDS, list_shards, read_shard, replay_costs

#: Largest relative difference between a stored objective and the env's float32 replay.
REPLAY_RTOL = 1e-5


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m experiments.labels", description=__doc__)
    parser.add_argument("--out", type=Path, default=LABELS_DIR, help="the labels folder")
    verbs = parser.add_subparsers(dest="verb", required=True)
    make = verbs.add_parser("make", help="label instances for --hours")
    make.add_argument("--preset", required=True, choices=sorted(PRESET_SEEDS))
    budget = make.add_mutually_exclusive_group(required=True)
    budget.add_argument("--iterations", type=int, help="PyVRP iterations per instance")
    budget.add_argument("--seconds", type=float, help="PyVRP wall seconds per instance")
    make.add_argument("--hours", type=float, required=True)
    make.add_argument("--shard-size", type=int, default=SHARD_SIZE)
    make.add_argument("--max-instances", type=int, default=None)
    make.add_argument("--nice", type=int, default=19)
    verbs.add_parser("status", help="labels per preset")
    verbs.add_parser("verify", help="checksums and replays of every shard")
    return parser


def status_lines(folder: Path) -> list[str]:
    """One line per preset folder: shards, labels, CPU hours, mean objective."""
    lines = []
    for preset in sorted(p.name for p in Path(folder).iterdir() if p.is_dir()):
        shards = [read_shard(p, verify=False) for p in list_shards(Path(folder) / preset)]
        labels = sum(s.count for s in shards)
        cpu_hours = sum(sum(s.cpu_seconds) for s in shards) / 3600.0
        total = sum(sum(s.objective) for s in shards)
        budgets = sorted({json.dumps(s.provenance.get("budget")) for s in shards})
        mean = f"{total / labels:.4f}" if labels else "-"
        lines.append(
            f"{preset}: {len(shards)} shards, {labels} labels, {cpu_hours:.2f} CPU h, "
            f"budget {', '.join(budgets)}, mean objective {mean}"
        )
    return lines


def verify(folder: Path) -> list[str]:
    """Problems found (empty: every shard's checksum holds and every label replays to its
    objective within :data:`REPLAY_RTOL`)."""
    problems = []
    for preset_dir in sorted(p for p in Path(folder).iterdir() if p.is_dir()):
        for path in list_shards(preset_dir):
            try:
                shard = read_shard(path)
                costs = replay_costs(shard)
            except ValueError as exc:
                problems.append(f"{path}: {exc}")
                continue
            for k, (cost, objective) in enumerate(zip(costs.tolist(), shard.objective)):
                if abs(cost - objective) > REPLAY_RTOL * max(1.0, abs(objective)):
                    problems.append(
                        f"{path}: label {k}: replays to {cost:.6f}, "
                        f"stored objective {objective:.6f}"
                    )
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    log_to_stdout()
    if args.verb == "make":
        options = MakeOptions(
            preset=args.preset,
            iterations=args.iterations,
            seconds=args.seconds,
            hours=args.hours,
            out=args.out,
            shard_size=args.shard_size,
            max_instances=args.max_instances,
            nice=args.nice,
        )
        make_labels(options)
        print("\n".join(status_lines(args.out)))
    elif args.verb == "status":
        print("\n".join(status_lines(args.out)) if Path(args.out).is_dir() else "no labels yet")
    else:
        problems = verify(args.out)
        print("\n".join(problems) if problems else "every shard verified")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
