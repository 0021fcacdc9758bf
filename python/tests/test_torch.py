"""linattn.torch: CPU tensors in, tensors out (skipped without torch)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import linattn.torch as lt  # noqa: E402
from linattn import reference as ref  # noqa: E402

from conftest import rel_err  # noqa: E402


def test_linear_attention_tensors():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.rand(1, 2, 9, 4, generator=g) for _ in range(3))
    o = lt.linear_attention(q, k, v)
    assert isinstance(o, torch.Tensor) and o.shape == (1, 2, 9, 4)
    want = ref.linear_attention(q.numpy(), k.numpy(), v.numpy())
    assert rel_err(o.numpy(), want) < 1e-5


def test_recurrent_state_tensors():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.rand(1, 2, 5, 4, generator=g, dtype=torch.float64)
               for _ in range(3))
    state = lt.RecurrentState(1, 2, 4, dtype=torch.float64)
    outs = [state.step(q[:, :, i].contiguous(), k[:, :, i].contiguous(),
                       v[:, :, i].contiguous()) for i in range(5)]
    got = torch.stack(outs, dim=2)
    full = lt.linear_attention(q, k, v)
    assert rel_err(got.numpy(), full.numpy()) < 1e-12
    assert isinstance(state.S, torch.Tensor)


def test_errors():
    q = torch.rand(1, 1, 3, 4)
    with pytest.raises(ValueError, match="requires grad"):
        lt.linear_attention(q.requires_grad_(), q.detach(), q.detach())
    with pytest.raises(ValueError, match="not contiguous"):
        x = torch.rand(1, 1, 4, 3).transpose(2, 3)
        lt.linear_attention(x, x, x)
    with pytest.raises(TypeError, match="float16, float32 or float64"):
        x = torch.ones(1, 1, 3, 4, dtype=torch.int32)
        lt.linear_attention(x, x, x)
    with pytest.raises(TypeError, match="torch.Tensor"):
        lt.linear_attention(np.ones((1, 1, 3, 4)), q, q)
