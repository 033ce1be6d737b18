"""Training entry point in RL4CO's layout: ``python run.py experiment=... key=value ...``.

The config tree is ``configs/`` (``main.yaml`` lists every top-level key); the training is
:func:`clrp_rl4co.models.training.train`. Runs go to ``runs/<run_name>/``
(:class:`clrp_rl4co.models.runs.RunFolder`)."""

from clrp_rl4co.models.training import main

if __name__ == "__main__":
    main()
