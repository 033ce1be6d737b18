"""RL4CO models for the CLRP policies: building them, training them, shipping them.

- :mod:`.build`: :func:`build_model` (POMO / REINFORCE / imitation), the algorithm's checkpoint
  metric, the paper's schedule, fixed validation sets (re-exported here);
- :mod:`.imitation`: :class:`Imitation`, training by the log-likelihood of expert solutions
  (:class:`ExpertDataset`, :mod:`.expert_data`), in random equivalent forms (:mod:`.equivalence`);
- :mod:`.leader`: :class:`LeaderRewardPOMO`, POMO whose best start weighs more in the loss
  (``build_model(..., leader_weight=w)``);
- :mod:`.training`: the one training implementation (``run.py``, ``configs/``);
- :mod:`.runs`: the layout of a run folder;
- :mod:`.curves`: metrics CSV across resumes, progress lines, the learning-curve plotter;
- :mod:`.shipping`: a run's policy as a pretrained model with its provenance;
- :mod:`.decoding`: decoding a batch under a decode spec (:class:`DecodeSpec`,
  :func:`decode_batch`).
"""

from ..policies import build_policy, load_policy
from .build import (
    ALGORITHMS,
    AUGMENTS,
    PolicyConfigCallback,
    algorithm_of,
    build_model,
    fixed_dataset,
    monitor_metric,
    step_lr_schedule,
)
from .decoding import DecodeSpec, decode_batch
from .expert_data import ExpertDataset
from .imitation import Imitation
from .leader import LeaderRewardPOMO

__all__ = [
    "ALGORITHMS",
    "AUGMENTS",
    "DecodeSpec",
    "ExpertDataset",
    "Imitation",
    "LeaderRewardPOMO",
    "PolicyConfigCallback",
    "algorithm_of",
    "build_model",
    "build_policy",
    "decode_batch",
    "fixed_dataset",
    "load_policy",
    "monitor_metric",
    "step_lr_schedule",
]
