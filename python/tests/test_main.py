"""python -m linattn."""

import os
import subprocess
import sys

import linattn


def run(*args):
    return subprocess.run([sys.executable, "-m", "linattn", *args],
                          capture_output=True, text=True, env=os.environ,
                          timeout=120)


def test_version():
    r = run("--version")
    assert r.returncode == 0
    assert r.stdout.startswith(f"linattn {linattn.__version__}\n")
    assert "libLinAttnCAPI.so" in r.stdout


def test_self_check():
    r = run("--self-check")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "self-check passed" in r.stdout
    assert r.stdout.count("ok   ") == 3


def test_missing_library_is_explained(tmp_path):
    env = dict(os.environ, LINATTN_LIBRARY=str(tmp_path / "nope.so"))
    r = subprocess.run([sys.executable, "-c",
                        "import linattn, numpy as np\n"
                        "x = np.ones((1, 1, 2, 2), np.float32)\n"
                        "linattn.linear_attention(x, x, x)"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode != 0
    assert "LibraryNotFoundError" in r.stderr
    assert "LINATTN_LIBRARY=" in r.stderr and "does not name a file" in r.stderr
