"""What a unit of work tells the process's commit hooks about itself beyond its rows (in session.info).

Every commit moves the machine's commit generation, which invalidates every cached read
(web/kernel/readcache.py). Bookkeeping that runs on timers whatever happens (a relay pass, a sweep that
changed nothing but its own run record) marks its unit of work as changing nothing a read serves, so that
idle timers do not empty every cache of the machine every few seconds.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

_UNSEEN = "concord_unseen_by_reads"


def unseen_by_reads(session: AsyncSession) -> None:
    """This unit of work changes nothing that any API read shows (only bookkeeping)."""
    session.info[_UNSEEN] = True


def seen_by_reads(session: AsyncSession) -> bool:
    """Whether the committed unit of work may have changed what reads show (and clears the mark)."""
    return not session.info.pop(_UNSEEN, False)
