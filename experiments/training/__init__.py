"""What the training runs share (the generalist, the imitation arms), importing neither of them.

- :mod:`.state`: a run's resumable state (the committed ``weights.pt`` + ``state.json``, the
  local checkpoint with the optimizer, where a resume starts);
- :mod:`.trend`: the training instances still needed for a target on the curve's trend;
- :mod:`.imitation_pass`: one imitation pass over expert labels (:class:`~.imitation_pass.Recipe`).
"""
