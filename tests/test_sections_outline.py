"""Sections of large texts: what `replace_body` derives for the new text without parsing it again (the
splice) must be exactly what parsing it says, for any Markdown around and in the replaced body: code
fences left open, setext headings, lists, HTML blocks, link reference definitions, headings in the new
body. Pure functions of the text, so they are called directly."""

from __future__ import annotations

import uuid
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.consensus import sections

# Other threads of the test process (the broker's workers, the drivers) may use `random` while Hypothesis
# draws examples, which it reports as a strategy using `random`; the strategies here do not.
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")

# Enough text before the pieces that the document is a large one (sections.LARGE), in the root section.
FILLER = "Filler words that make the text large.\n\n" * (sections.LARGE // 40 + 10)
# The property's examples are run with a lower bound for "large" and a filler to match: what counts is
# which side of the bound a text is on, and a text of 64 KB made each of the 300 examples parse about a
# megabyte (15 s of CPU a run, 1.5 s now, with the splice taken as often). A thread of the process that reads
# the bound meanwhile (a conversion left from an earlier test) only takes its other path, as correct.
LARGE_HERE = 2 * 1024
FILLER_HERE = "Filler words that make the text large.\n\n" * (LARGE_HERE // 40 + 10)

PIECES = [
    "# Title",
    "## Sub",
    "### Deep",
    "# Same",
    "Setext\n===",
    "Setext two\n---",
    "para text",
    "text with *emph* and `code`",
    "- item\n- item 2",
    "1. one\n2. two",
    "- # heading in a list",
    "> quote",
    "> # heading in a quote",
    "```",
    "```\ncode\n```",
    "~~~",
    "    indented code",
    "  # indented heading",
    "#NoSpace",
    "<div>",
    "<!-- open comment",
    "-->",
    "<pre>",
    "</pre>",
    "[ref]: /url",
    "# [ref]",
    "***",
    "---",
    "",
    "| a | b |\n| - | - |\n| 1 | 2 |",
    "line\u2028separated",
    "x\x0by",
]
_pieces = st.lists(st.sampled_from(PIECES), max_size=12)


def _fresh(text: str) -> sections.Outline:
    return sections.outline(text)


def _by_lines(text: str, sec: sections.Section, new_body: str) -> str:
    """replace_body's result by its definition: the text's lines with the body's replaced."""
    lines = sections.lines_of(text)
    new = sections.lines_of(new_body.strip("\n"))
    if sec.id != sections.ROOT_ID:
        new = ["", *new] if new else []
    if sec.body_end < len(lines) and new:
        new.append("")
    return "\n".join(lines[: sec.body_start] + new + lines[sec.body_end :]).rstrip("\n") + "\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    before=_pieces,
    after=_pieces,
    new=_pieces,
    lead=st.booleans(),
    pick=st.integers(min_value=0, max_value=1000),
    end=st.sampled_from(["\n", "", "\n\n", "\r\n"]),
)
def test_a_replaced_body_outlines_as_a_fresh_parse_does(before, after, new, lead, pick, end):
    with patch.object(sections, "LARGE", LARGE_HERE):
        _replaced_body_outlines_as_a_fresh_parse_does(before, after, new, lead, pick, end)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    before=_pieces,
    after=_pieces,
    new=_pieces,
    pick=st.integers(min_value=0, max_value=1000),
    end=st.sampled_from(["\n", "", "\n\n", "\r\n"]),
)
def test_a_replaced_body_of_a_small_text_outlines_as_a_fresh_parse_does(before, after, new, pick, end):
    """Small texts (a topic's few kilobytes) are spliced too, kept in the cache keyed by the text: run
    with the splice's lower bound under every example, so that each one that can be spliced is."""
    with patch.object(sections, "SPLICE_FROM", 0):
        _replaced_body_outlines_as_a_fresh_parse_does(before, after, new, False, pick, end, filler="")


def _replaced_body_outlines_as_a_fresh_parse_does(before, after, new, lead, pick, end, filler=FILLER_HERE):
    assert not filler or len(filler) > sections.LARGE
    text = (filler if lead else "") + "\n".join(["# Doc", filler if not lead else "", *before, *after]) + end
    found = sections.parse(text)
    target = found[pick % len(found)]
    new_text = sections.replace_body(text, target.id, "\n".join(new))
    assert new_text == _by_lines(text, target, "\n".join(new))
    fresh = _fresh(new_text)
    if sections.known(new_text):  # the splice applied: it must say what a parse says
        assert sections._parsed(new_text)[0] == fresh
    # Either way, the sections read from the new text are those of a parse.
    assert [
        (s.id, s.title, s.level, s.body_start, s.body_end, s.body_from, s.body_to)
        for s in sections.parse(new_text)
    ] == [
        (s.id, s.title, s.level, s.body_start, s.body_end, s.body_from, s.body_to)
        for s in sections._build(fresh)[1]
    ]
    # And each body is its lines, as the line-based reading gives it.
    lines = sections.lines_of(new_text)
    for sec in sections.parse(new_text):
        assert sections.body(new_text, sec) == "\n".join(lines[sec.body_start : sec.body_end]).strip("\n")


def test_a_plain_change_in_a_large_text_is_spliced_not_parsed_again():
    text = "# Doc\n\n" + FILLER + "## Part\n\nold\n\n## Next\n\nmore\n"
    new_text = sections.replace_body(text, "sec:doc:part", "new words\n\n- a list")
    assert sections.known(new_text)
    assert sections._parsed(new_text)[0] == sections.outline(new_text)
    following = sections.find(new_text, "sec:doc:next")
    assert following is not None
    assert sections.body(new_text, following) == "more"


def test_a_change_that_opens_a_code_fence_is_parsed_again():
    """An unclosed fence swallows the headings after it: the splice must see that and step aside."""
    text = "# Doc\n\n" + FILLER + "## Part\n\nold\n\n## Next\n\nmore\n"
    new_text = sections.replace_body(text, "sec:doc:part", "```\nopen fence")
    assert not sections.known(new_text)
    assert [s.id for s in sections.parse(new_text)] == ["sec:doc", "sec:doc:part"]


def _topic(parts: int) -> str:
    """A topic of a few kilobytes: a claim, its evidence and parts with details."""
    details = " ".join(f"Detail {n}: what the evidence for this part says, in a sentence." for n in range(8))
    body = "\n".join(f"## Part {n}\n\n{details}\n" for n in range(parts))
    head = "# Answer\n\nThe claim.\n\n## Evidence\n\nSome evidence.\n\n# Discussion\n\nOpen points.\n\n"
    return head + body


def test_a_merge_into_a_topic_is_spliced_and_the_next_lookup_parses_nothing():
    """A topic's next proposal looks its section up in the text the last merge wrote: that text's outline
    was derived by the merge, from the old one and a parse of the new body alone."""
    text = _topic(4) + f"\nWritten by {uuid.uuid4()}.\n"  # in no cache yet
    assert sections.SPLICE_FROM <= len(text) <= sections.LARGE
    assert sections.find(text, "sec:answer") is not None
    with patch.object(sections, "outline", wraps=sections.outline) as parses:
        new_text = sections.replace_body(
            text, "sec:answer", "A sharper claim, with a [link](https://x.test)."
        )
        found = sections.find(new_text, "sec:discussion:part-3")
    assert found is not None
    assert sections.body(new_text, found).startswith("Detail 0:")
    parsed = [call.args[0] for call in parses.call_args_list]
    assert parsed, "the new body was parsed"
    assert all(len(one) < 200 for one in parsed), "only the new body and the next heading"
    assert sections._parsed(new_text)[0] == sections.outline(new_text)


def test_a_short_text_is_parsed_when_read_not_spliced_when_written():
    text = f"# Answer\n\nThe claim.\n\n# Discussion\n\nOpen points ({uuid.uuid4()}).\n"  # in no cache yet
    assert len(text) < sections.SPLICE_FROM
    assert sections.find(text, "sec:answer") is not None
    with patch.object(sections, "outline", wraps=sections.outline) as parses:
        new_text = sections.replace_body(text, "sec:answer", "Sharper.")
        assert parses.call_count == 0
        assert sections.find(new_text, "sec:discussion") is not None
    assert [call.args[0] for call in parses.call_args_list] == [new_text]
