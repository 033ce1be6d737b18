"""Search methods on top of RL4CO policies: decoding within a budget (:mod:`.learned_starts`,
its plan :mod:`.decode_plan` and pool :mod:`.rollout_pool`) and SGBS (:mod:`.sgbs`;
``clrp_rl4co.sgbs`` is its function). Import the modules themselves: this package imports
nothing, so that the budgeted decoding does not import RL4CO's search utilities."""
