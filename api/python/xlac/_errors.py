"""xlac's exception classes (defined in Python so the extension module and the package share them)."""

import builtins


class Error(Exception):
    """Base class of every error xlac raises about a module or a run."""


class CompileError(Error, ValueError):
    """The module text does not parse, verify or partition.

    The message holds the compiler's diagnostics, ``file:line:col: error: message`` followed by the source line and
    a caret, as xla-opt and xla-run print them.
    """


class UnimplementedError(Error, NotImplementedError):
    """The module uses something xlac does not implement yet (an op codegen does not lower, an unsupported sharding)."""


class RuntimeError(Error, builtins.RuntimeError):  # noqa: A001 - xlac.RuntimeError, as the docs name it
    """A run failed (a custom call or collective error, memory limits, an internal error)."""
