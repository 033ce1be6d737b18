import os

# Headless: pictures are written to files. Set before anything imports matplotlib; the
# library itself never chooses a backend.
os.environ.setdefault("MPLBACKEND", "Agg")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def benchmarks_root() -> Path:
    """The folder of the public benchmark instances ($CLRP_BENCHMARKS_DIR).

    Under CI (``CI=true``) a missing variable is a failure, elsewhere the test is skipped.
    """
    value = os.environ.get("CLRP_BENCHMARKS_DIR")
    if not value:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CLRP_BENCHMARKS_DIR is not set under CI")
        pytest.skip("CLRP_BENCHMARKS_DIR not set")
    root = Path(value)
    if not (root / "prins").is_dir():
        pytest.fail(f"CLRP_BENCHMARKS_DIR={value} has no prins/ folder")
    return root


@pytest.fixture(autouse=True)
def _restore_float32_matmul_precision():
    """RL4COTrainer sets torch's float32 matmul precision to "medium" for the whole process;
    tests that compare decodings exactly (SGBS, batch independence) must not see that from an
    earlier training test or a module-scoped fixture that trained, so every test starts at
    torch's default ("highest") and leaves the setting as it found it."""
    precision = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    yield
    torch.set_float32_matmul_precision(precision)


@pytest.fixture(scope="module")
def tiny_instances():
    """Four 6-customer instances (the exact solver proves each in a moment)."""
    from instances import random_instance

    return [random_instance(6, seed=seed, num_depots=2) for seed in range(4)]


@pytest.fixture(scope="module")
def serial(tiny_instances):
    """Their proven optima, solved one after another in this process."""
    from clrp_rl4co.solving import solve_many

    results = solve_many(tiny_instances, method="exact", seconds=20)
    assert all(r.status == "optimal" for r in results)
    return results
