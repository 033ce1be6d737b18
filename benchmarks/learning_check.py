"""Learning check: train DRLHQ on CLRP10 for a fixed time, evaluate before and after.

Trains with ``run.py`` (the package's training path; ``experiment=cpu_clrp20`` on clrp10 with
3,200 instances per epoch) for ``--minutes``, then evaluates the untrained initialisation (the
run's initial weights, from its seed and config) and the run's best policy on ``--instances``
fresh instances (a seed the training never uses) with single greedy, multistart greedy (N
starts, the paper's "greedy") and multistart greedy with x8 augmentation (RL4CO dihedral and the
paper's 45-degree rotations). The paper reports 8.6988 (greedy) and 8.6480 (augmented) on CLRP10
after full training. Further Hydra overrides follow ``--`` (e.g. ``-- model.policy.embed_dim=64``).

    python benchmarks/learning_check.py --minutes 20 --run runs/learning_check
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import lightning as L
import torch
from hydra.utils import instantiate

from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset
from clrp_rl4co.models import decode_batch, load_policy
from clrp_rl4co.models.runs import RunFolder
from clrp_rl4co.reporting.markdown import markdown_table

ROOT = Path(__file__).resolve().parents[1]
PAPER = {"multistart_greedy": 8.6988, "multistart_greedy+rot8": 8.6480}
DECODES = ["greedy", "multistart_greedy", "multistart_greedy+aug8", "multistart_greedy+rot8"]


def mean_objective(policy: torch.nn.Module, env: CLRPEnv, batches: list, spec: str) -> float:
    """Mean objective of ``policy`` under the decode ``spec`` over ``batches``."""
    totals = [decode_batch(policy, env, td, spec)[1]["total"] for td in batches]
    return float(torch.cat(totals).mean())


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--minutes", type=float, default=20.0, help="training time (trainer.max_time)")
    p.add_argument("--instances", type=int, default=1000)
    p.add_argument("--test-seed", type=int, default=777_000)
    p.add_argument("--run", default="runs/learning_check", help="run folder")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--skip-train", action="store_true", help="only evaluate --run's policy")
    p.add_argument("overrides", nargs="*", help="more Hydra overrides of run.py")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    run = RunFolder(Path(args.run).resolve())
    if not args.skip_train:
        overrides = [
            "experiment=cpu_clrp20",
            "model=drlhq",
            "env.generator_params.preset=clrp10",
            "model.train_data_size=3200",
            "trainer.max_epochs=1000",
            f"trainer.max_time={{minutes:{args.minutes}}}",
            f"num_threads={args.threads}",
            f"paths.log_dir={run.path.parent}",
            f"run_name={run.path.name}",
            *args.overrides,
        ]
        subprocess.run([sys.executable, str(ROOT / "run.py"), *overrides], check=True)

    config = run.config()
    L.seed_everything(int(config.seed), workers=True)
    instantiate(config.env)  # as in training: the env draws from the RNG before the policy
    initial = instantiate(config.model.policy).eval()  # the run's initial weights
    trained = load_policy(run.policy_best.with_suffix(".pt")).eval()
    instances = generate_dataset(CLRPGenerator(preset="clrp10"), args.instances, args.test_seed)
    batches = [instances[i : i + 250] for i in range(0, args.instances, 250)]
    env = CLRPEnv(check_actions=False)
    result: dict = {"before": {}, "after": {}, "paper": PAPER, "args": vars(args)}
    table = []
    for spec in DECODES:
        result["before"][spec] = mean_objective(initial, env, batches, spec)
        result["after"][spec] = mean_objective(trained, env, batches, spec)
        before, after = result["before"][spec], result["after"][spec]
        table.append([spec, f"{before:.4f}", f"{after:.4f}", PAPER.get(spec, "")])
    print(markdown_table(["decode", "untrained", "trained", "paper"], table), flush=True)
    (run.path / "learning_check.json").write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
