"""Imitation against POMO at equal CPU hours: two resumable training arms from the same shipped
model (``python -m experiments.imitation``; ``settings`` the recipe of each arm, ``state`` their
counters, ``loop`` the training, ``curve`` the curve and its report)."""
