"""The library's input errors in command-line terms.

The library never names a flag: an :class:`~ovreduce.errors.InputError` says which of the library
function's parameters it is about (``inputs``, ``shapes``, ``reshape``, ``save_ir``). Each command maps
that parameter to its own options here, and the message gains a hint naming them.
"""

from __future__ import annotations

from collections.abc import Mapping

from ovreduce.errors import InputError, OvReduceError

__all__ = ["OPTIONS", "in_flag_terms"]

# parameter -> command -> the options that give it on that command
OPTIONS: Mapping[str, Mapping[str, str]] = {
    "inputs": {"run": "--input NAME=FILE", "audit": "--input NAME=FILE", "conform": "--input NAME=FILE"},
    "shapes": {"run": "--shape NAME=SHAPE or --input NAME=FILE", "audit": "--shape NAME=SHAPE or --input NAME=FILE",
               "conform": "--shape NAME=SHAPE or --input NAME=FILE"},
    "reshape": {"check": "--reshape NAME=SHAPE", "inspect": "--reshape NAME=SHAPE"},
    "save_ir": {"conform": "--save-ir DIR"},
}  # fmt: skip


def in_flag_terms(command: str, exc: OvReduceError) -> str:
    """``exc``'s message, with the options of ``command`` that give what it is about (where there are any)."""
    if not isinstance(exc, InputError) or exc.parameter is None or exc.twice:  # (given twice: not "give it")
        return exc.message
    option = OPTIONS.get(exc.parameter, {}).get(command)
    return f"{exc.message} (give it with {option})" if option else exc.message
