"""The package version (kept equal to the CMake project's)."""

__version__ = "0.1.0"
