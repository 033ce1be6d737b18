"""How far the lower bound sits below the best-known values of the 30 Prins instances:

    python -m benchmarks.hard.prins_bound [--lp] [--seconds 120]

One line per file (bound, best-known value, gap in percent, seconds) and the mean, range and
worst time; the files come from ``$CLRP_BENCHMARKS_DIR/prins``, the values from the package's
table of current best-known values.
"""

from __future__ import annotations

import argparse
import statistics

from clrp_rl4co.data import read_prodhon
from clrp_rl4co.data.bks import BestKnown
from clrp_rl4co.data.prodhon import benchmarks_dir

from .bound import lower_bound


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lp", action="store_true", help="the LP instead of the MIP")
    parser.add_argument("--seconds", type=float, default=120.0, help="HiGHS's limit per file")
    args = parser.parse_args(argv)
    known = BestKnown.read(None)
    gaps, times = [], []
    for path in sorted((benchmarks_dir() / "prins").glob("coord*.dat")):
        instance = read_prodhon(path)
        bks = known.lookup(path, path.name, instance)
        bound = lower_bound(instance, args.seconds, integer_depots=not args.lp)
        gap = 100.0 * (bks - bound.value) / bks
        gaps.append(gap)
        times.append(bound.seconds)
        print(f"{path.name}: bound {bound.value:.1f}, best known {bks:.1f}, {gap:.1f}% below, "
              f"{bound.seconds:.1f} s")  # fmt: skip
    print(
        f"{len(gaps)} files: {statistics.mean(gaps):.1f}% below on average "
        f"({min(gaps):.1f}-{max(gaps):.1f}%), at most {max(times):.1f} s per file"
    )


if __name__ == "__main__":
    main()
