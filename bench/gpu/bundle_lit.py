#!/usr/bin/env python3
"""lit with the relocatable bundle's tools (scripts/bundle.sh).

Runs linattn's test suites from this source tree on a machine without LLVM 22:
the bundle's lit, its tools, and bundle.lit.site.cfg.py in place of the site
configuration a build writes. bench/gpu/device.sh calls it as

    LINATTN_BUNDLE=<unpacked bundle> bench/gpu/bundle_lit.py -v test/Integration/GPU/CUDA

Only the suites that need no linattn-opt (the GPU ones) can pass this way.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

bundle = os.environ.get("LINATTN_BUNDLE")
if not bundle or not os.path.isdir(os.path.join(bundle, "lit")):
    sys.exit("bundle_lit.py: set LINATTN_BUNDLE to an unpacked linattn bundle")
sys.path.insert(0, bundle)
from lit.main import main  # noqa: E402

# lit maps the suite's configuration file to this one as it discovers it.
suite_config = os.path.join(ROOT, "test", "lit.cfg.py")
site_config = os.path.join(HERE, "bundle.lit.site.cfg.py")
config_map = {os.path.normcase(p): site_config
              for p in {os.path.abspath(suite_config), os.path.realpath(suite_config)}}
main({"config_map": config_map})
