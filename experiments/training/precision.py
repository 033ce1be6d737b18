"""Mixed precision of the background training loops (the imitation arms, the generalist).

The rule is the package's (:func:`clrp_rl4co.models.training.training_precision`): float32 on
the CPU, bf16 autocast on a GPU that supports bf16, fp16 autocast with a gradient scaler on one
that does not. Master weights and Adam stay float32 whatever the precision; only the forward
pass (the rollouts and the loss) runs under autocast, and the evaluations stay float32 so that
a curve's points compare across precisions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import torch

#: What a run's ``hardware`` line adds when its training steps run the decoder's step compiled
#: (:func:`clrp_rl4co.models.training.compile_decoder`; nothing when eager).
COMPILED_NOTE = "; compiled decoder"

#: Lightning's names of the precisions a loop accepts, and their autocast dtype (None: none).
AUTOCAST_DTYPES: dict[str, torch.dtype | None] = {
    "32-true": None,
    "bf16-mixed": torch.bfloat16,
    "16-mixed": torch.float16,
}


def cpu_units() -> str:
    """torch's CPU capability (``AVX2``, ``AVX512``, ...) and whether oneDNN finds bf16 units
    (without them bf16 is emulated), as the throughput reports print them."""
    bf16_units = torch.ops.mkldnn._is_mkldnn_bf16_supported()
    return f"{torch.backends.cpu.get_cpu_capability()}, bf16 units {'yes' if bf16_units else 'no'}"


@contextlib.contextmanager
def autocast_for(precision: str, device: torch.device) -> Iterator[None]:
    """The autocast of a Lightning precision (``bf16-mixed`` / ``16-mixed``) on ``device``;
    none for full precision."""
    dtype = AUTOCAST_DTYPES.get(str(precision))
    if dtype is None:
        yield
        return
    with torch.autocast(device_type=device.type, dtype=dtype):
        yield


@dataclass
class MixedPrecision:
    """One loop's precision on its device.

    Attributes:
        precision: Lightning's name (``32-true``, ``bf16-mixed``, ``16-mixed``).
        device: the device the loop trains on.
        scaler: the gradient scaler (enabled for ``16-mixed`` only, a pass-through otherwise).
    """

    precision: str
    device: torch.device
    scaler: torch.amp.GradScaler

    @classmethod
    def for_device(cls, device: str | torch.device, given: str | None = None) -> MixedPrecision:
        """``given``, or the package's rule for ``device``'s type.

        Raises:
            ValueError: ``given`` is not one of :data:`AUTOCAST_DTYPES` (naming it).
        """
        from clrp_rl4co.models.training import training_precision  # lightning: only when used

        device = torch.device(device)
        precision = training_precision(device.type, given)
        if precision not in AUTOCAST_DTYPES:
            raise ValueError(f"precision: {precision!r} is not one of {', '.join(AUTOCAST_DTYPES)}")
        scaler = torch.amp.GradScaler(device.type, enabled=precision == "16-mixed")
        return cls(precision=precision, device=device, scaler=scaler)

    @property
    def is_mixed(self) -> bool:
        """Whether the forward pass runs under autocast."""
        return AUTOCAST_DTYPES[self.precision] is not None

    @property
    def hardware_note(self) -> str:
        """What a run's ``hardware`` line adds for this precision: ``"; bf16-mixed"`` for a mixed
        one, nothing for float32 (the default)."""
        return f"; {self.precision}" if self.is_mixed else ""

    def autocast(self) -> contextlib.AbstractContextManager[None]:
        """The forward pass's context: the loss is computed inside it."""
        return autocast_for(self.precision, self.device)

    def apply(
        self,
        loss: torch.Tensor,
        optimizer: torch.optim.Optimizer,
        parameters: Iterable[torch.nn.Parameter],
        max_grad_norm: float,
    ) -> None:
        """One optimizer step on ``loss``: backward (scaled for fp16), the gradients' norm
        clipped at ``max_grad_norm`` on the unscaled gradients, then the step (skipped by the
        scaler when an fp16 gradient overflowed)."""
        parameters = list(parameters)
        optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(parameters, max_grad_norm)
        self.scaler.step(optimizer)
        self.scaler.update()
