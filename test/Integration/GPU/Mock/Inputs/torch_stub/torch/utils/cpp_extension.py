"""torch.utils.cpp_extension.load as a record of its arguments."""
import os
import types


def load(name, sources, extra_cuda_cflags=(), build_directory=None,
         verbose=False):
    for source in sources:
        with open(source) as f:
            text = f.read().strip()
        print(f"load {name}: {os.path.relpath(source, build_directory)} "
              f"({text}) flags {' '.join(extra_cuda_cflags)}")
    return types.SimpleNamespace(causal_dot_product=None)
