"""Expert data for imitation: instances with one expert action sequence each
(:class:`ExpertDataset`)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from tensordict import TensorDict
from torch.utils.data import Dataset

from clrp_rl4co.envs.clrp import INSTANCE_KEYS
from clrp_rl4co.envs.clrp.validity import pad_actions

#: Key of the expert sequences in a batch of :class:`ExpertDataset`.
EXPERT_ACTIONS = "expert_actions"
#: Instance arrays the env fills in when absent (from ``locs``; unrounded costs).
OPTIONAL = ("cost_locs", "rounded_costs")


class ExpertDataset(Dataset):
    """Instances and one expert action sequence per instance, batched as one TensorDict.

    An item (and a batch: the loader passes lists of indices to :meth:`__getitems__`) is a
    TensorDict with the instance arrays of :data:`~clrp_rl4co.envs.clrp.INSTANCE_KEYS` and
    :data:`EXPERT_ACTIONS` [T] (env node indices, padded with ``PADDING_ACTION``). Every
    instance has the same numbers of depots and customers.

    Args:
        instances: batch [K] of instances.
        actions: LongTensor [K, T] (or an int array), padded with ``PADDING_ACTION``.

    Raises:
        ValueError: counts differ, ``actions`` is not 2-D, an action is outside
            ``0..D+N-1`` or an instance array is missing (naming it).
    """

    def __init__(self, instances: TensorDict, actions: torch.Tensor):
        actions = torch.as_tensor(actions).long()
        if actions.dim() != 2:
            raise ValueError(f"actions: need shape [K, T], got {list(actions.shape)}")
        count = int(instances.batch_size[0]) if instances.batch_dims else -1
        if count != actions.shape[0]:
            raise ValueError(
                f"actions: {actions.shape[0]} sequences for {count} instances (batch "
                f"{list(instances.batch_size)})"
            )
        missing = [k for k in INSTANCE_KEYS if k not in instances.keys() and k not in OPTIONAL]
        if missing:
            raise ValueError(f"instances: missing arrays {missing}")
        num_nodes = instances["locs"].shape[-2]
        if actions.numel() and (int(actions.min()) < 0 or int(actions.max()) >= num_nodes):
            bad = actions[(actions < 0) | (actions >= num_nodes)][0]
            raise ValueError(f"actions: node index {int(bad)} outside 0..{num_nodes - 1}")
        keys = [k for k in INSTANCE_KEYS if k in instances.keys()]
        self.data = instances.select(*keys).clone()
        self.data.set(EXPERT_ACTIONS, actions)

    @classmethod
    def concatenate(cls, parts: Sequence[ExpertDataset]) -> ExpertDataset:
        """One dataset of several (same instance size); sequences padded to the longest."""
        if not parts:
            raise ValueError("parts: no datasets to concatenate")
        length = max(p.data[EXPERT_ACTIONS].shape[-1] for p in parts)
        sizes = {tuple(p.data["locs"].shape[1:]) for p in parts}
        if len(sizes) > 1:
            raise ValueError(f"parts: instances of different sizes {sorted(sizes)} (nodes, 2)")
        keys = sorted(set.intersection(*(set(p.data.keys()) for p in parts)) - {EXPERT_ACTIONS})
        instances = torch.cat([p.data.select(*keys) for p in parts])
        actions = torch.cat([pad_actions(p.data[EXPERT_ACTIONS], length) for p in parts])
        return cls(instances, actions)

    @property
    def instances(self) -> TensorDict:
        """The instances, batch [K]."""
        return self.data.exclude(EXPERT_ACTIONS)

    @property
    def actions(self) -> torch.Tensor:
        """The expert sequences, LongTensor [K, T]."""
        return self.data[EXPERT_ACTIONS]

    def __len__(self) -> int:
        return int(self.data.batch_size[0])

    def __getitem__(self, index: int) -> TensorDict:
        return self.data[index]

    def __getitems__(self, indices: list[int]) -> TensorDict:
        return self.data[torch.as_tensor(indices, dtype=torch.long)]

    @staticmethod
    def collate_fn(batch: TensorDict) -> TensorDict:
        """The batch as :meth:`__getitems__` made it (RL4CO's ``FastTdDataset`` convention)."""
        return batch
