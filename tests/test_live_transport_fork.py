"""A process forked from one that imported the live events' transport is another sender: its messages reach
this process's listeners (web processes are forked from their supervisor, infra/forked.py; with one origin
between them, each ignored its siblings' events and they arrived only with the periodic check, seconds late),
and this process still ignores its own."""

from __future__ import annotations

import os

from infra.live import transport


def test_a_forked_sibling_is_another_origin() -> None:
    events = [("topic:t1", {"seq": 1, "type": "pact.proposal.merged"})]
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child only encodes and writes: nothing of the test process's threads is touched
        try:
            os.write(writer, transport.encode(events))
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        from_sibling = pipe.read()
    os.waitpid(pid, 0)
    assert transport.decode(from_sibling) == events
    assert transport.decode(transport.encode(events)) is None  # its own, still ignored
