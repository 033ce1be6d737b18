"""``python -m experiments.campaign run / apply / init / status``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from clrp_rl4co.reporting import provenance

from . import __doc__ as CAMPAIGN_DOC
from .apply import apply
from .session import RunOptions, run
from .settings import CAMPAIGN_DIR, MODEL_SIZES, PRESET_SETTINGS, PRESETS, track_name
from .state import init_state, save_state, state_file, status


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(
        prog="python -m experiments.campaign",
        description=CAMPAIGN_DOC.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run", help="one campaign session: train every preset for --minutes")
    r.add_argument("--minutes", type=float, required=True, help="wall minutes of the whole run")
    r.add_argument("--out", required=True, help="folder of the archives and campaign.json")
    r.add_argument("--presets", nargs="+", default=list(PRESETS), choices=list(PRESET_SETTINGS))
    r.add_argument(
        "--size",
        default="shipped",
        choices=list(MODEL_SIZES),
        help="model size: shipped (128-d, 3 layers; default), paper (256-d, 6 layers)",
    )
    r.add_argument("--work", default=None, help="run folders and logs (default runs/campaign/ID)")
    r.add_argument(
        "--concurrent",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="all tracks at once (default on a GPU) or one after the other",
    )
    r.add_argument("--in-process", action="store_true", help="train in this process (tests)")
    r.add_argument("--val-every", type=float, default=50.0, help="seconds between validations")
    r.add_argument("--floor", type=float, default=0.1, help="least share of time per preset")
    r.add_argument("--accelerator", default="auto", help="Lightning accelerator (cpu, gpu, auto)")
    r.add_argument("--precision", default=None, help="default: training_precision's rule")
    r.add_argument(
        "--compile",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="compile the decoder's step (default: training_compile's rule)",
    )
    r.add_argument("--threads", type=int, default=None, help="torch threads per process")
    r.add_argument("--batch-size", type=int, default=None, help="instead of the preset's")
    r.add_argument("--epoch-size", type=int, default=None, help="instead of the preset's")
    r.add_argument("--val-size", type=int, default=None, help="a new track's validation size")
    r.add_argument("--startup", type=float, default=None, help="seconds before training starts")
    r.add_argument("--dry-run", action="store_true", help="print the plan, train nothing")
    r.add_argument(
        "--generalist-minutes",
        type=float,
        default=0.0,
        help="then continue the generalist run (experiments.generalist) for this many minutes",
    )
    for name, help_text in (("--state-dir", "committed state"), ("--pretrained-dir", "models")):
        r.add_argument(name, default=None, help=help_text)
    a = sub.add_parser("apply", help="bring a returned folder into the committed state")
    a.add_argument("folder")
    a.add_argument("--state-dir", default=None)
    a.add_argument("--pretrained-dir", default=None)
    i = sub.add_parser("init", help="write missing state files and validation sets")
    i.add_argument("--presets", nargs="+", default=list(PRESETS), choices=list(PRESET_SETTINGS))
    i.add_argument("--size", default="shipped", choices=list(MODEL_SIZES))
    i.add_argument("--state-dir", default=None)
    s = sub.add_parser("status", help="where each preset stands")
    s.add_argument("--size", default="shipped", choices=list(MODEL_SIZES))
    s.add_argument("--state-dir", default=None)
    args = p.parse_args(argv)
    state_dir = Path(args.state_dir) if getattr(args, "state_dir", None) else CAMPAIGN_DIR
    pretrained = getattr(args, "pretrained_dir", None)
    pretrained = Path(pretrained) if pretrained else None
    if args.verb == "run":
        options = RunOptions(
            minutes=args.minutes, out=Path(args.out), presets=tuple(args.presets), size=args.size,
            state_dir=state_dir, pretrained_dir=pretrained,
            work=Path(args.work) if args.work else None, concurrent=args.concurrent,
            in_process=args.in_process, val_every_s=args.val_every, floor=args.floor,
            accelerator=args.accelerator, precision=args.precision, compile=args.compile,
            threads=args.threads,
            batch_size=args.batch_size, epoch_size=args.epoch_size, val_size=args.val_size,
            startup_s=args.startup, dry_run=args.dry_run,
            command=provenance.command_line(argv, prog="python -m experiments.campaign"),
        )  # fmt: skip
        summary = run(options)
        if options.dry_run:
            return 0
        if args.generalist_minutes > 0:
            import torch

            from .generalist import run_generalist

            gpu = args.accelerator in ("gpu", "cuda", "auto") and torch.cuda.is_available()
            device = "cuda" if gpu else "cpu"
            result = run_generalist(args.generalist_minutes, Path(args.out), device, args.threads)
            print(json.dumps({"generalist": result}), flush=True)
        failed = {t: i.get("exit") for t, i in summary["tracks"].items() if i.get("exit") != 0}
        print(json.dumps({"tracks": list(summary["tracks"]), "not clean": failed}), flush=True)
        return 1 if failed else 0
    if args.verb == "apply":
        from .generalist import FOLDER, apply_generalist

        if any(Path(args.folder).glob("*.tar")) or not (Path(args.folder) / FOLDER).is_dir():
            for done in apply(args.folder, state_dir, pretrained):
                print(f"{done['track']} {done['session']}: {done['action']}")
        if (Path(args.folder) / FOLDER).is_dir():
            print(apply_generalist(Path(args.folder)))
        for line in status(state_dir):
            print(line)
        return 0
    if args.verb == "init":
        from clrp_rl4co.policies import PRETRAINED_DIR

        for preset in args.presets:
            path = state_file(state_dir, track_name(preset, args.size))
            if path.is_file():
                print(f"{path}: exists")
                continue
            state = init_state(preset, args.size, state_dir, PRETRAINED_DIR)
            print(f"{save_state(state, state_dir)}: written")
        return 0
    print("\n".join(status(state_dir, args.size)))  # status
    return 0
