"""Imports every route module of the document API so that they register on its Api."""

from web.docs import documents, proposals  # noqa: F401
