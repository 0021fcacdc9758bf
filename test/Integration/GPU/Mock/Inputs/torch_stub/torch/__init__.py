"""A stand-in for torch with only what bench.py --build-peers may use:
torch.utils.cpp_extension.load. Any GPU use (torch.cuda, torch.device)
fails with AttributeError."""
__version__ = "stub"
