"""linattn.torch: tensors in, tensors out (skipped without torch; the CUDA
tensor cases without a GPU)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import linattn  # noqa: E402
import linattn.torch as lt  # noqa: E402
from linattn import reference as ref  # noqa: E402

from conftest import normalized_cancellation, rel_err  # noqa: E402


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


def test_compile_options_tensors():
    g = torch.Generator().manual_seed(4)
    q, k, v = (torch.rand(1, 2, 40, 8, generator=g) for _ in range(3))
    options = {"chunk-size": 16, "num-threads": 1}
    o = lt.linear_attention(q, k, v, compile_options=options)
    want = ref.linear_attention(q.numpy(), k.numpy(), v.numpy())
    assert rel_err(o.numpy(), want) < 1e-5
    state = lt.RecurrentState(1, 2, 8, compile_options=options)
    assert rel_err(state.update(q, k, v).numpy(), want) < 1e-5


def test_errors():
    q = torch.rand(1, 1, 3, 4)
    p = torch.rand(4, 8, requires_grad=True)
    with pytest.raises(ValueError, match="projection requires grad"):
        lt.linear_attention(q, q, q, feature_map="favor", projection=p)
    state = lt.RecurrentState(1, 1, 4)
    with pytest.raises(ValueError, match="q requires grad"):
        state.update(q.clone().requires_grad_(), q, q)
    with pytest.raises(ValueError, match="not contiguous"):
        x = torch.rand(1, 1, 4, 3).transpose(2, 3)
        lt.linear_attention(x, x, x)
    with pytest.raises(TypeError, match="float16, float32 or float64"):
        x = torch.ones(1, 1, 3, 4, dtype=torch.int32)
        lt.linear_attention(x, x, x)
    with pytest.raises(TypeError, match="torch.Tensor"):
        lt.linear_attention(np.ones((1, 1, 3, 4)), q, q)


def test_float16_recurrent_state():
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.rand(1, 2, 6, 4, generator=g).half() for _ in range(3))
    state = lt.RecurrentState(1, 2, 4, dtype=torch.float16)
    got = state.update(q, k, v)
    assert got.dtype == torch.float16 and state.S.dtype == torch.float32
    want = ref.linear_attention(q.numpy(), k.numpy(), v.numpy())
    assert rel_err(got.numpy(), want) < 2e-3


#===------------------------------------------------------------------------===#
# Autograd
#===------------------------------------------------------------------------===#


@pytest.mark.parametrize("feature_map,causal,normalize", [
    ("elu", True, True), ("elu", False, True), ("relu", True, False),
    ("identity", False, False), ("poly2", True, True)])
def test_autograd_gradcheck(feature_map, causal, normalize):
    # float64 against torch's central differences of the same compiled
    # forward pass: N = 6 queries, M = 5 keys across, Dv = 2 != D.
    g = torch.Generator().manual_seed(7)
    m = 6 if causal else 5
    q, k = (torch.rand(1, 2, n, 3, generator=g, dtype=torch.float64)
            for n in (6, m))
    v = torch.rand(1, 2, m, 2, generator=g, dtype=torch.float64) - 0.5
    if feature_map == "elu":
        q, k = q - 0.5, k - 0.5
    inputs = tuple(x.requires_grad_() for x in (q, k, v))

    def fn(q, k, v):
        return lt.linear_attention(q, k, v, feature_map=feature_map,
                                   causal=causal, normalize=normalize)
    assert torch.autograd.gradcheck(fn, inputs)


def test_autograd_matches_reference():
    # float32, the default options: .backward() fills q.grad, k.grad and
    # v.grad with the reference's gradients; an input that does not require
    # grad gets none.
    g = torch.Generator().manual_seed(8)
    b, h, n, d, dv = 2, 3, 40, 8, 5
    q, k = (torch.rand(b, h, n, d, generator=g) - 0.5 for _ in range(2))
    v = torch.rand(b, h, n, dv, generator=g) - 0.5
    do = torch.rand(b, h, n, dv, generator=g) - 0.5
    q.requires_grad_()
    v.requires_grad_()
    o = lt.linear_attention(q, k, v)
    assert o.requires_grad and o.grad_fn is not None
    o.backward(do)
    want = ref.linear_attention_grad(*(x.detach().double().numpy()
                                       for x in (q, k, v, do)))
    assert rel_err(q.grad.double().numpy(), want[0]) < 1e-4
    assert rel_err(v.grad.double().numpy(), want[2]) < 1e-4
    assert k.grad is None


def test_autograd_favor_and_no_grad():
    # favor: gradients of q, k, v with the projection fixed. Under no_grad
    # the result needs none.
    g = torch.Generator().manual_seed(9)
    q, k, v = ((torch.rand(1, 2, 12, 4, generator=g, dtype=torch.float64)
                - 0.5).requires_grad_() for _ in range(3))
    p = torch.randn(4, 8, generator=g, dtype=torch.float64) * 0.25

    def fn(q, k, v):
        return lt.linear_attention(q, k, v, feature_map="favor", projection=p)
    assert torch.autograd.gradcheck(fn, (q, k, v))
    with torch.no_grad():
        assert not lt.linear_attention(q, k, v).requires_grad


#===------------------------------------------------------------------------===#
# Segments: initial_state and output_final_state
#===------------------------------------------------------------------------===#


def stateful(q, k, v, state, **options):
    o, (s, z) = lt.linear_attention(q, k, v, initial_state=state,
                                    output_final_state=True, **options)
    return o, s, z


@pytest.mark.parametrize("feature_map,normalize", [
    ("elu", True), ("elu", False), ("poly2", True), ("identity", False)])
def test_stateful_gradcheck(feature_map, normalize):
    # float64 against central differences: q, k, v and the initial state,
    # with the outputs and the final state in the loss.
    g = torch.Generator().manual_seed(11)
    b, h, n, d, dv = 1, 2, 6, 3, 2
    f = 1 + d + d * d if feature_map == "poly2" else d
    q, k = (torch.rand(b, h, n, d, generator=g, dtype=torch.float64) - 0.5
            for _ in range(2))
    if feature_map == "identity":
        q, k = q + 0.5, k + 0.5
    v = torch.rand(b, h, n, dv, generator=g, dtype=torch.float64) - 0.5
    s0 = torch.rand(b, h, f, dv, generator=g, dtype=torch.float64)
    z0 = torch.rand(b, h, f, generator=g, dtype=torch.float64) + 0.5
    inputs = tuple(x.requires_grad_() for x in (q, k, v, s0, z0))

    def fn(q, k, v, s0, z0):
        return stateful(q, k, v, (s0, z0), feature_map=feature_map,
                        normalize=normalize)
    assert torch.autograd.gradcheck(fn, inputs)


def test_stateful_gradcheck_partial():
    # The final state alone in the loss (the outputs' gradient is None), no
    # initial state; and the initial state alone requiring grad.
    g = torch.Generator().manual_seed(12)
    q, k, v = ((torch.rand(1, 2, 5, 3, generator=g, dtype=torch.float64)
                - 0.5).requires_grad_() for _ in range(3))
    assert torch.autograd.gradcheck(
        lambda q, k, v: stateful(q, k, v, None)[2].square().sum()
        + stateful(q, k, v, None)[1].sum(), (q, k, v))
    s0 = torch.rand(1, 2, 3, 3, generator=g, dtype=torch.float64,
                    requires_grad=True)
    z0 = torch.rand(1, 2, 3, generator=g, dtype=torch.float64) + 0.5
    assert torch.autograd.gradcheck(
        lambda s0: lt.linear_attention(q.detach(), k.detach(), v.detach(),
                                       initial_state=(s0, z0)), (s0,))


def test_segments_train_like_the_whole_sequence():
    # float32, three segments chained through their states (7, 1 and 32
    # tokens): the outputs, final state and gradients of q, k, v of the
    # whole sequence, to rounding; no gradient flows where none is asked.
    g = torch.Generator().manual_seed(13)
    b, h, n, d, dv = 2, 3, 40, 8, 5
    x = [torch.rand(b, h, n, e, generator=g) - 0.5 for e in (d, d, dv, dv)]
    do = x.pop()
    whole = [t.clone().requires_grad_() for t in x]
    o, s, z = stateful(*whole, None)
    (o * do).sum().backward()

    parts = [t.clone().requires_grad_() for t in x]
    outs, state = [], None
    for lo, hi in ((0, 7), (7, 8), (8, n)):
        o_part, s_part, z_part = stateful(
            *(t[:, :, lo:hi].contiguous() for t in parts), state)
        outs.append(o_part)
        state = (s_part, z_part)
    got = torch.cat(outs, dim=2)
    (got * do).sum().backward()
    assert rel_err(got.detach().numpy(), o.detach().numpy()) < 1e-5
    assert rel_err(state[0].detach().numpy(), s.detach().numpy()) < 1e-5
    for part, full in zip(parts, whole):
        assert rel_err(part.grad.numpy(), full.grad.numpy()) < 1e-5
    want = ref.linear_attention_grad(*(t.double().numpy() for t in x),
                                     do.double().numpy())
    for part, w in zip(parts, want):
        assert rel_err(part.grad.double().numpy(), w) < 1e-4
    with torch.no_grad():
        o, (s, z) = lt.linear_attention(*parts, output_final_state=True)
    assert not (o.requires_grad or s.requires_grad or z.requires_grad)


def test_stateful_float16():
    # float16 data, float32 states, on the CPU: the segments' outputs and
    # the gradients against float64.
    g = torch.Generator().manual_seed(14)
    b, h, n, d = 1, 2, 48, 16
    x = [(torch.rand(b, h, n, d, generator=g) - 0.5).half() for _ in range(4)]
    parts = [t.clone().requires_grad_() for t in x[:3]]
    o1, s, z = stateful(*(t[:, :, :20].contiguous() for t in parts), None)
    assert o1.dtype == torch.float16 and s.dtype == torch.float32
    o2, _, _ = stateful(*(t[:, :, 20:].contiguous() for t in parts), (s, z))
    (torch.cat([o1, o2], dim=2).float() * x[3].float()).sum().backward()
    exact = [t.double().numpy() for t in x]
    want = ref.linear_attention_grad(*exact)
    kappa = normalized_cancellation("elu", *exact, True)
    for i, (part, w) in enumerate(zip(parts, want)):
        tol = 8e-3 * (kappa[i == 1] if i < 2 else 1)
        assert rel_err(part.grad.double().numpy(), w) <= tol


def test_stateful_errors():
    q = torch.rand(1, 1, 3, 4)
    s, z = torch.zeros(1, 1, 4, 4), torch.zeros(1, 1, 4)
    with pytest.raises(ValueError, match="need causal=True"):
        lt.linear_attention(q, q, q, causal=False, output_final_state=True)
    with pytest.raises(TypeError, match=r"must be a pair \(S, z\)"):
        lt.linear_attention(q, q, q, initial_state=s)
    with pytest.raises(TypeError, match="initial_state's S has dtype "
                                        "float64"):
        lt.linear_attention(q, q, q, initial_state=(s.double(), z))
    with pytest.raises(ValueError, match=r"initial_state's z must have "
                                         r"shape \(1, 1, 4\)"):
        lt.linear_attention(q, q, q, initial_state=(s, z[..., :3]))
    with pytest.raises(ValueError, match="initial_state's S is not "
                                         "contiguous"):
        lt.linear_attention(q, q, q, initial_state=(s.transpose(2, 3), z))


#===------------------------------------------------------------------------===#
# CUDA tensors (linattn.linear_attention_device)
#===------------------------------------------------------------------------===#

needs_cuda = pytest.mark.skipif(
    not torch.cuda.is_available()
    or "cuda" not in linattn.available_backends(),
    reason="no CUDA device")

# Two units in the last place at 1 for the 16-bit types.
CUDA_TOL = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2,
            torch.float32: 2e-5, torch.float64: 1e-12}


@needs_cuda
@pytest.mark.parametrize("dtype", list(CUDA_TOL))
@pytest.mark.parametrize("causal,normalize,m", [(True, True, 70),
                                                (True, False, 70),
                                                (False, True, 45)])
def test_cuda_tensors(dtype, causal, normalize, m):
    g = torch.Generator(device="cuda").manual_seed(3)
    b, h, n, d, dv = 2, 3, 70, 16, 24
    q = torch.rand(b, h, n, d, generator=g, device="cuda").to(dtype)
    k = torch.rand(b, h, m, d, generator=g, device="cuda").to(dtype)
    v = torch.rand(b, h, m, dv, generator=g, device="cuda").to(dtype) - 0.5
    o = lt.linear_attention(q, k, v, causal=causal, normalize=normalize)
    assert o.device == q.device and o.dtype == dtype
    assert o.shape == (b, h, n, dv)
    want = ref.linear_attention(*(x.double().cpu().numpy() for x in (q, k, v)),
                                causal=causal, normalize=normalize)
    assert rel_err(o.double().cpu().numpy(), want) <= CUDA_TOL[dtype]


@needs_cuda
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="one GPU")
def test_cuda_tensors_on_each_gpu():
    # Tensors on every GPU run there, in torch's context for it, whichever
    # device is current: the same inputs give the same outputs; the
    # recurrent state decodes on its device too.
    g = torch.Generator().manual_seed(6)
    b, h, n, d = 1, 2, 40, 16
    x = [torch.rand(b, h, n, d, generator=g).to(torch.bfloat16) - 0.5
         for _ in range(3)]
    outs = []
    for index in range(torch.cuda.device_count()):
        device = torch.device("cuda", index)
        q, k, v = (t.to(device) for t in x)
        o = lt.linear_attention(q, k, v)
        assert o.device == device
        state = lt.RecurrentState(b, h, d, device=device, dtype=torch.bfloat16)
        assert state.device == device
        step = state.step(*(t[:, :, 0].contiguous() for t in (q, k, v)))
        assert step.device == device
        outs.append((o.cpu(), step.cpu()))
    for o, step in outs[1:]:
        assert torch.equal(o, outs[0][0]) and torch.equal(step, outs[0][1])


@needs_cuda
@pytest.mark.parametrize("option,tol", [
    # tf32 products: f16's bound in the GPU tests.
    ("tf32", 4e-3),
    # Each product three tf32 products (tf32x3): f32's bound.
    ("tf32x3", 2e-5),
])
def test_cuda_tensors_tf32(option, tol):
    # float32 tensors on tf32 tensor cores (compile_options), the causal
    # scan and the recurrent state's prompt.
    g = torch.Generator(device="cuda").manual_seed(5)
    b, h, n, d, dv = 2, 3, 200, 64, 40
    q, k = (torch.rand(b, h, n, d, generator=g, device="cuda") for _ in range(2))
    v = torch.rand(b, h, n, dv, generator=g, device="cuda") - 0.5
    o = lt.linear_attention(q, k, v, compile_options={option: True})
    want = ref.linear_attention(*(x.double().cpu().numpy() for x in (q, k, v)))
    assert rel_err(o.double().cpu().numpy(), want) <= tol
    state = lt.RecurrentState(b, h, d, dv, device="cuda",
                              compile_options={option: True})
    got = state.update(q, k, v)
    assert rel_err(got.double().cpu().numpy(), want) <= tol


@needs_cuda
@pytest.mark.parametrize("feature_map,d", [("poly2", 4), ("favor", 32)])
def test_cuda_feature_maps(feature_map, d):
    # poly2 and favor on CUDA tensors: the maps' own kernels, then the scan;
    # the recurrent state keeps [B, H, F, Dv].
    g = torch.Generator(device="cuda").manual_seed(6)
    b, h, n, dv = 2, 3, 40, 16
    q, k = ((torch.rand(b, h, n, d, generator=g, device="cuda") - 0.5) * 0.5
            for _ in range(2))
    v = torch.rand(b, h, n, dv, generator=g, device="cuda") - 0.5
    p = None
    if feature_map == "favor":
        p = torch.randn(d, 48, generator=g, device="cuda") * 0.25
    want = ref.linear_attention(
        *(x.double().cpu().numpy() for x in (q, k, v)), feature_map=feature_map,
        projection=None if p is None else p.double().cpu().numpy())
    o = lt.linear_attention(q, k, v, feature_map=feature_map, projection=p)
    assert rel_err(o.double().cpu().numpy(), want) <= 2e-5
    state = lt.RecurrentState(b, h, d, dv, device="cuda",
                              feature_map=feature_map, projection=p)
    prompt = state.update(q[:, :, :30].contiguous(), k[:, :, :30].contiguous(),
                          v[:, :, :30].contiguous())
    steps = [state.step(q[:, :, i].contiguous(), k[:, :, i].contiguous(),
                        v[:, :, i].contiguous()) for i in range(30, n)]
    got = torch.cat([prompt, torch.stack(steps, dim=2)], dim=2)
    assert rel_err(got.double().cpu().numpy(), want) <= 2e-5
    assert state.S.shape == (b, h, 48 if p is not None else 1 + d + d * d, dv)


@needs_cuda
def test_cuda_tensors_on_a_side_stream():
    # The kernels go on torch's current stream: work queued before on that
    # stream is seen, and reading the result after synchronizing it is safe.
    b, h, n, d = 4, 8, 2048, 64
    x = torch.randn(3, b, h, n, d, device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        q, k, v = (x[i] * 0.5 for i in range(3))  # queued on `side`
        o = lt.linear_attention(q, k, v)
    side.synchronize()
    want = ref.linear_attention(*(t.double().cpu().numpy() for t in (q, k, v)))
    assert rel_err(o.double().cpu().numpy(), want) <= CUDA_TOL[torch.bfloat16]


@needs_cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("causal,normalize", [(True, True), (False, False)])
def test_cuda_autograd(dtype, causal, normalize):
    # CUDA tensors that require grad: the backward pass on the GPU
    # (linear_attention_grad_device), against the reference's gradients.
    g = torch.Generator(device="cuda").manual_seed(10)
    b, h, n, d, dv = 2, 3, 70, 16, 24
    q, k, v, do = (torch.rand(b, h, n, x, generator=g, device="cuda") - 0.5
                   for x in (d, d, dv, dv))
    q, k, v, do = (x.to(dtype) for x in (q, k, v, do))
    leaves = [x.clone().requires_grad_() for x in (q, k, v)]
    o = lt.linear_attention(*leaves, causal=causal, normalize=normalize)
    o.backward(do)
    exact = [x.double().cpu().numpy() for x in (q, k, v, do)]
    want = ref.linear_attention_grad(*exact, causal=causal,
                                     normalize=normalize)
    for name, leaf, w in zip(("dq", "dk", "dv"), leaves, want):
        assert leaf.grad.dtype == dtype and leaf.grad.device == q.device
        # Rounded between the scans and the chain rule (and normalized, g
        # and h before them); dq's and dk's terms cancel
        # (conftest.normalized_cancellation).
        tol = CUDA_TOL[dtype] * (4 if normalize else 2)
        if name in ("dq", "dk") and normalize:
            kappa = normalized_cancellation("elu", *exact, causal)
            tol = max(tol, CUDA_TOL[dtype] * kappa[name == "dk"] / 2)
        assert rel_err(leaf.grad.double().cpu().numpy(), w) <= tol, name


@needs_cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_cuda_segments(dtype):
    # Segments chained through their states on the GPU (recurrent_device
    # forward, linear_attention_grad_device with the states backward): the
    # whole sequence's outputs, final state and gradients.
    g = torch.Generator(device="cuda").manual_seed(15)
    b, h, n, d, dv = 2, 3, 90, 16, 24
    x = [(torch.rand(b, h, n, e, generator=g, device="cuda") - 0.5).to(dtype)
         for e in (d, d, dv, dv)]
    do = x.pop()
    parts = [t.clone().requires_grad_() for t in x]
    outs, state = [], None
    for lo, hi in ((0, 33), (33, 34), (34, n)):
        o_part, s_part, z_part = stateful(
            *(t[:, :, lo:hi].contiguous() for t in parts), state)
        assert s_part.dtype == torch.float32 and s_part.device == do.device
        outs.append(o_part)
        state = (s_part, z_part)
    got = torch.cat(outs, dim=2)
    (got.float() * do.float()).sum().backward()
    exact = [t.double().cpu().numpy() for t in x + [do]]
    want, want_s, _ = ref.causal_linear_attention_rnn(*exact[:3])
    assert rel_err(got.double().cpu().numpy(), want) <= 2 * CUDA_TOL[dtype]
    assert rel_err(state[0].double().cpu().numpy(), want_s) <= \
        2 * CUDA_TOL[dtype]
    grads = ref.linear_attention_grad(*exact)
    kappa = normalized_cancellation("elu", *exact, True)
    for i, (part, w) in enumerate(zip(parts, grads)):
        assert part.grad.dtype == dtype
        tol = CUDA_TOL[dtype] * 4
        if i < 2:
            tol = max(tol, CUDA_TOL[dtype] * kappa[i == 1] / 2)
        assert rel_err(part.grad.double().cpu().numpy(), w) <= tol, i


@needs_cuda
def test_cuda_errors():
    q = torch.rand(1, 1, 8, 4, device="cuda")
    with pytest.raises(ValueError, match="k is on cpu, not cuda:0"):
        lt.linear_attention(q, q.cpu(), q)
    with pytest.raises(TypeError, match="float16, bfloat16, float32 or "
                                        "float64"):
        x = q.to(torch.int32)
        lt.linear_attention(x, x, x)
    with pytest.raises(ValueError, match="feature_map='favor' needs a "
                                         "projection"):
        lt.linear_attention(q, q, q, feature_map="favor")
    with pytest.raises(ValueError, match="not contiguous"):
        x = torch.rand(1, 1, 4, 8, device="cuda").transpose(2, 3)
        lt.linear_attention(x, x, x)
    with pytest.raises(ValueError, match="this takes CPU tensors"):
        lt.RecurrentState(1, 1, 4).step(q[:, :, 0], q[:, :, 0], q[:, :, 0])


def test_recurrent_state_copy_keeps_the_class():
    state = lt.RecurrentState(1, 1, 4)
    other = state.copy()
    assert type(other) is lt.RecurrentState
    assert isinstance(other.S, torch.Tensor)
    assert not np.shares_memory(other.S.numpy(), state.S.numpy())


@needs_cuda
@pytest.mark.parametrize("dtype", list(CUDA_TOL))
def test_cuda_recurrent_state(dtype):
    # A prompt through update, then steps, on the GPU: the full causal pass;
    # a copy decodes on independently.
    g = torch.Generator(device="cuda").manual_seed(4)
    b, h, n, d, dv, prompt = 2, 3, 40, 16, 12, 31
    q, k = (torch.randn(b, h, n, d, generator=g, device="cuda").to(dtype)
            for _ in range(2))
    v = torch.randn(b, h, n, dv, generator=g, device="cuda").to(dtype)
    state = lt.RecurrentState(b, h, d, dv, dtype=dtype, device="cuda")
    s_buffer = state.S.data_ptr()
    outs = [state.update(q[:, :, :prompt].contiguous(),
                         k[:, :, :prompt].contiguous(),
                         v[:, :, :prompt].contiguous())]
    branch = state.copy()
    for i in range(prompt, n):
        outs.append(state.step(q[:, :, i].contiguous(), k[:, :, i].contiguous(),
                               v[:, :, i].contiguous())[:, :, None])
    got = torch.cat(outs, dim=2)
    assert got.dtype == dtype and got.device == q.device
    assert state.S.dtype == (torch.float32 if dtype in (torch.float16,
                                                        torch.bfloat16)
                             else dtype)
    assert state.position == n
    assert state.S.data_ptr() == s_buffer  # updated in place
    want, want_s, _ = ref.causal_linear_attention_rnn(
        *(x.double().cpu().numpy() for x in (q, k, v)))
    assert rel_err(got.double().cpu().numpy(), want) <= CUDA_TOL[dtype]
    assert rel_err(state.S.double().cpu().numpy(), want_s) <= CUDA_TOL[dtype]
    # The copy still holds the prompt's state.
    o = branch.step(q[:, :, prompt].contiguous(), k[:, :, prompt].contiguous(),
                    v[:, :, prompt].contiguous())
    assert torch.equal(o, outs[1][:, :, 0])


@needs_cuda
def test_cuda_recurrent_state_in_a_cuda_graph():
    # Two steps captured in one CUDA graph (the normalizer's two buffers
    # come back to where they were), replayed over new tokens copied into the
    # graph's inputs: the same outputs as the causal pass.
    b, h, d, n = 8, 32, 128, 10
    g = torch.Generator(device="cuda").manual_seed(5)
    q, k, v = (torch.randn(b, h, n, d, generator=g, device="cuda")
               for _ in range(3))
    state = lt.RecurrentState(b, h, d, device="cuda")
    inputs = [[torch.empty(b, h, d, device="cuda") for _ in range(3)]
              for _ in range(2)]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        state.step(*inputs[0])  # compiles and loads the kernels
    torch.cuda.current_stream().wait_stream(side)
    state.reset()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outputs = [state.step(*inputs[0]), state.step(*inputs[1])]
    state.reset()  # the zeros the graph reads (capture ran nothing)
    got = []
    for i in range(0, n, 2):
        for j in range(2):
            for dst, src in zip(inputs[j], (q, k, v)):
                dst.copy_(src[:, :, i + j])
        graph.replay()
        got += [outputs[0].clone(), outputs[1].clone()]
    got = torch.stack(got, dim=2)
    want = ref.linear_attention(*(x.double().cpu().numpy() for x in (q, k, v)))
    assert rel_err(got.double().cpu().numpy(), want) <= CUDA_TOL[torch.float32]
