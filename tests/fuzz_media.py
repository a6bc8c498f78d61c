"""Files of the formats the document API's upload declares (multipart encoding), for schemathesis: imported by
tests/test_openapi_fuzz.py and loaded as the hooks module (SCHEMATHESIS_HOOKS) of the CLI runs it starts."""

from __future__ import annotations

import schemathesis
from hypothesis import strategies as st

MARKDOWN = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=200).map(
    lambda text: f"# Fuzzed\n\n{text}\n".encode()
)
schemathesis.openapi.media_type("text/markdown", MARKDOWN)
schemathesis.openapi.media_type("text/plain", MARKDOWN)
schemathesis.openapi.media_type(
    "text/html", MARKDOWN.map(lambda md: b"<html><body><p>" + md + b"</p></body></html>")
)
