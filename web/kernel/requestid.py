"""Request ids: the client's own `X-Request-Id` when it is a plain token, else a new random UUID (version 4
format), quoted in logs and error bodies so a client and an operator can find the same request.

A request id names a request; it is no secret and grants nothing, so it comes from the process's seeded
Mersenne Twister (122 random bits, reseeded in every forked child) rather than `uuid.uuid4()`, whose
`os.urandom` system call cost a cached read about a tenth of its CPU under load."""

from __future__ import annotations

import re
from random import getrandbits

_GIVEN = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
# The variant nibble of an RFC 9562 UUID is 8, 9, a or b: two of a random hex digit's four bits.
_VARIANT = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}


def new() -> str:
    """A random id in the UUID version 4 format."""
    h = f"{getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


def of(given: str | None) -> str:
    """The client's id when it is a plain token of at most 128 characters, else a new one."""
    return given if given and _GIVEN.match(given) else new()
