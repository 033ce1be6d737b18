"""The background loops' mixed precision (experiments/training/precision.py): the rule, the
autocast of the forward pass, and an optimizer step that equals the float32 one."""

import pytest
import torch

from experiments.training.precision import MixedPrecision, cpu_units


def test_the_cpu_trains_in_float32_unless_told_otherwise():
    default = MixedPrecision.for_device("cpu")
    assert default.precision == "32-true" and not default.is_mixed
    assert not default.scaler.is_enabled()
    given = MixedPrecision.for_device("cpu", "bf16-mixed")
    assert given.precision == "bf16-mixed" and given.is_mixed
    assert not given.scaler.is_enabled()  # bf16 has float32's range: nothing to scale
    assert default.hardware_note == "" and given.hardware_note == "; bf16-mixed"
    assert MixedPrecision.for_device("cpu", "16-mixed").scaler.is_enabled()


def test_an_unknown_precision_is_named():
    with pytest.raises(ValueError, match="precision: 'fp8' is not one of 32-true, bf16-mixed"):
        MixedPrecision.for_device("cpu", "fp8")


@pytest.mark.parametrize(
    "precision, dtype", [("32-true", torch.float32), ("bf16-mixed", torch.bfloat16)]
)
def test_the_forward_pass_multiplies_in_the_precisions_dtype(precision, dtype):
    a, b = torch.rand(4, 8), torch.rand(8, 3)
    with MixedPrecision.for_device("cpu", precision).autocast():
        assert (a @ b).dtype == dtype
    assert (a @ b).dtype == torch.float32  # and only inside


def _clipped_sgd_step(weight: torch.Tensor, grad: torch.Tensor, lr: float, clip: float):
    """SGD's step on the gradient clipped to norm ``clip``, from the definitions."""
    norm = grad.norm()
    if norm > clip:
        grad = grad * (clip / norm)
    return weight - lr * grad


@pytest.mark.parametrize("precision", ["32-true", "16-mixed"])
def test_a_step_clips_the_true_gradient_then_descends(precision):
    # SGD, not Adam: Adam is nearly blind to a gradient's scale, SGD moves by it, so a clip
    # of the scaled fp16 gradient (before unscaling) would show
    weight = torch.nn.Parameter(torch.tensor([1.0, -2.0, 0.5]))
    target = torch.tensor([4.0, 2.0, -3.0])
    loss = ((weight - target) ** 2).sum()  # gradient 2 (w - t) = [-6, -8, 7], norm 12.2
    expected = _clipped_sgd_step(weight.detach(), 2 * (weight.detach() - target), 0.1, 1.0)
    MixedPrecision.for_device("cpu", precision).apply(
        loss, torch.optim.SGD([weight], lr=0.1), [weight], max_grad_norm=1.0
    )
    assert torch.allclose(weight.detach(), expected, rtol=0, atol=1e-6)
    assert weight.dtype == torch.float32


def test_an_overflowing_fp16_step_is_skipped_and_the_scale_halves():
    weight = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    mixed = MixedPrecision.for_device("cpu", "16-mixed")
    scale = mixed.scaler.get_scale()
    loss = (weight * torch.tensor([float("inf"), 1.0])).sum()
    mixed.apply(loss, torch.optim.SGD([weight], lr=0.1), [weight], max_grad_norm=1.0)
    assert weight.detach().tolist() == [1.0, 2.0]
    assert mixed.scaler.get_scale() == scale / 2


def test_the_cpu_units_name_torchs_capability_and_the_bf16_units():
    capability, bf16 = cpu_units().split(", ")
    assert capability == torch.backends.cpu.get_cpu_capability()
    assert bf16 in ("bf16 units yes", "bf16 units no")
