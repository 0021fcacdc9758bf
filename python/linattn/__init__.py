from . import ir
