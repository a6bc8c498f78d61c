"""Imports every module that registers a background job handler, so workers see all of them."""

from domain import escalations  # noqa: F401
from domain.documents import library, tap  # noqa: F401 - conversion job, lock sweep
