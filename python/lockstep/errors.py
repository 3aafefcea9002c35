"""Exceptions raised by lockstep, each carrying where the problem is.

Every error of lockstep's engine is a :class:`LockstepError` (a ``ValueError``). Its
attributes locate it in the input: ``line`` and ``column`` (1-based; grammars and regular
expressions), ``pointer`` (an RFC 6901 JSON pointer; schemas and tool lists, ``""`` is the
root), ``byte_offset`` (files, malformed JSON) and ``file`` (when the input has a name).
Missing parts are ``None``. ``message`` is the text without the location.
"""

from __future__ import annotations

from typing import Optional


class LockstepError(ValueError):
    """An input lockstep cannot use; ``str(e)`` reads "<location>: <message>"."""

    def __init__(self, what: str, *, message: Optional[str] = None, file: Optional[str] = None,
                 line: Optional[int] = None, column: Optional[int] = None,
                 pointer: Optional[str] = None, byte_offset: Optional[int] = None) -> None:
        super().__init__(what)
        self.message = message if message is not None else what
        self.file = file
        self.line = line
        self.column = column
        self.pointer = pointer
        self.byte_offset = byte_offset


class GrammarError(LockstepError):
    """A malformed GBNF grammar or regular expression (``line``, ``column``)."""


class SchemaError(LockstepError):
    """A JSON Schema or tool definition that cannot be compiled (``pointer``)."""


class FileFormatError(LockstepError):
    """A file that cannot be used as it is (``file``, and ``byte_offset`` or ``pointer``)."""


class TokenizerError(FileFormatError):
    """A tokenizer file or token list that cannot be used."""


class LimitError(LockstepError):
    """An input needs more than one of the engine limits allows (docs/limits.md)."""


__all__ = ["LockstepError", "GrammarError", "SchemaError", "FileFormatError", "TokenizerError", "LimitError"]
