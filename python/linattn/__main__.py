"""``python -m linattn --version`` and ``python -m linattn --self-check``."""

from __future__ import annotations

import argparse
import sys
import time
from typing import List, Optional


def _version() -> str:
    from . import __version__
    from ._capi import LibraryNotFoundError, find_library
    try:
        library = str(find_library())
    except LibraryNotFoundError as e:
        library = f"not found ({e})"
    return f"linattn {__version__}\nlibrary: {library}"


def self_check(verbose: bool = True) -> bool:
    """Compiles a few small kernels and compares them with the numpy
    definitions in `linattn.reference`; returns True when all agree."""
    import numpy as np

    from . import RecurrentState, linear_attention
    from . import reference as ref

    rng = np.random.default_rng(0)

    def rand(*shape: int) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, shape).astype(np.float32)

    b, h, n, m, d, dv = 1, 2, 33, 17, 16, 8
    q, k, v = rand(b, h, n, d), rand(b, h, n, d), rand(b, h, n, dv)
    kx, vx = rand(b, h, m, d), rand(b, h, m, dv)
    cases = []

    def check(name: str, got: np.ndarray, want: np.ndarray) -> None:
        err = float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)),
                                                     1e-30))
        cases.append((name, err, err < 1e-5))

    start = time.perf_counter()
    check("causal elu, normalized", linear_attention(q, k, v),
          ref.linear_attention(q, k, v))
    check("cross-attention relu (N=33, M=17)",
          linear_attention(q, kx, vx, feature_map="relu", causal=False),
          ref.linear_attention(q, kx, vx, feature_map="relu", causal=False))
    state = RecurrentState(b, h, d, dv)
    decoded = np.stack([state.step(q[:, :, i].copy(), k[:, :, i].copy(),
                                   v[:, :, i].copy()) for i in range(n)],
                       axis=2)
    check("decoding step by step vs the paper's RNN", decoded,
          ref.causal_linear_attention_rnn(q, k, v)[0])
    elapsed = time.perf_counter() - start

    ok = all(passed for _, _, passed in cases)
    if verbose:
        for name, err, passed in cases:
            print(f"{'ok  ' if passed else 'FAIL'} {name}: max relative error "
                  f"{err:.1e}")
        print(f"self-check {'passed' if ok else 'FAILED'} "
              f"({elapsed:.1f} s, compilation included)")
    return ok


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m linattn",
        description="linattn: linear attention kernels compiled with MLIR")
    parser.add_argument("--version", action="store_true",
                        help="print the version and the library in use")
    parser.add_argument("--self-check", action="store_true",
                        help="compile and run a few kernels against numpy")
    args = parser.parse_args(argv)
    if not args.version and not args.self_check:
        parser.print_help()
        return 0
    if args.version:
        print(_version())
    if args.self_check:
        return 0 if self_check() else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
