"""The outbound guard's tests share a fake DNS: the guard resolves every name through
`domain.kernel.outbound.lookup`, and this answers from a table instead of the system resolver, so a test
can make a name resolve to a NAT64 or 6to4 form, or answer differently the second time (rebinding)."""

from __future__ import annotations

import socket
from collections import Counter

import pytest

from domain.kernel import outbound


class FakeDNS:
    def __init__(self) -> None:
        self.answers: dict[str, list[list[str]]] = {}  # name -> one answer per lookup, the last repeats
        self.asked: Counter[str] = Counter()

    def set(self, name: str, *answers: list[str]) -> None:
        self.answers[name] = list(answers)

    async def lookup(self, host: str, port: int) -> list[str]:
        self.asked[host] += 1
        answers = self.answers.get(host)
        if not answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers[min(self.asked[host], len(answers)) - 1]


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDNS:
    fake = FakeDNS()
    monkeypatch.setattr(outbound, "lookup", fake.lookup)
    return fake
