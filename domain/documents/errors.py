"""A conversion that cannot succeed: the document is marked failed with this reason."""

from __future__ import annotations


class ConversionError(Exception):
    def __init__(self, reason: str, *, code: str = "corrupt") -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code
