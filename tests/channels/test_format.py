"""The shared chunker: size limits, preferred break points, code fences, inline markup."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from channels.format import split_message, split_plan, utf16_len

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)


def _fences_balanced(chunk: str) -> bool:
    return len(FENCE.findall(chunk)) % 2 == 0


def _words(text: str) -> list[str]:
    return text.split()


def test_short_text_is_one_chunk_unchanged():
    assert split_message("hello *world*", 100) == ["hello *world*"]


def test_blank_text_gives_no_chunks():
    assert split_message("", 100) == []
    assert split_message(" \n\n \t", 100) == []


def test_limit_too_small_is_refused():
    with pytest.raises(ValueError):
        split_message("x" * 100, 10)


def test_splits_at_paragraph_boundaries_first():
    paras = [f"Paragraph {i}. " + "word " * 15 for i in range(10)]
    text = "\n\n".join(p.strip() for p in paras)
    chunks = split_message(text, 300)
    assert all(len(c) <= 300 for c in chunks)
    for chunk in chunks:  # every chunk is whole paragraphs
        for part in chunk.split("\n\n"):
            assert part.startswith("Paragraph ") and part.endswith("word")
    assert _words(" ".join(chunks)) == _words(text)


def test_splits_at_line_boundaries_when_no_paragraphs():
    text = "\n".join(f"line {i:03d} " + "x" * 20 for i in range(100))
    chunks = split_message(text, 1000)
    assert all(len(c) <= 1000 for c in chunks)
    assert "\n".join(chunks).split("\n") == text.split("\n")


def test_one_long_line_splits_at_spaces():
    text = " ".join(f"w{i}" for i in range(2000))
    chunks = split_message(text, 500)
    assert len(chunks) > 1
    assert all(len(c) <= 500 for c in chunks)
    assert _words(" ".join(chunks)) == _words(text)  # no word cut in two


def test_word_without_spaces_is_hard_cut():
    text = "a" * 1000
    chunks = split_message(text, 300)
    assert all(len(c) <= 300 for c in chunks)
    assert "".join(chunks) == text


def test_code_block_kept_whole_when_it_fits():
    intro = "intro " * 30
    code = "```python\n" + "\n".join(f"x{i} = {i}" for i in range(20)) + "\n```"
    text = intro.strip() + "\n" + code + "\noutro"
    chunks = split_message(text, 260)
    code_chunk = next(c for c in chunks if "x0 = 0" in c)
    assert "x19 = 19" in code_chunk  # not split although it could have been
    assert code_chunk.startswith("```python")  # the break fell before the block
    assert all(_fences_balanced(c) for c in chunks)


def test_code_block_longer_than_limit_is_closed_and_reopened():
    body = [f"    value_{i} = compute({i})  # step {i}" for i in range(200)]
    text = "Here is the code:\n\n```python\n" + "\n".join(body) + "\n```\n\nDone."
    chunks = split_message(text, 1000)
    assert len(chunks) > 3
    assert all(len(c) <= 1000 for c in chunks)
    assert all(_fences_balanced(c) for c in chunks)
    inner = [c for c in chunks if "value_" in c]
    assert all(c.startswith("```python\n") or c.startswith("Here is") for c in inner)
    assert all(c.endswith("```") for c in inner[:-1])
    assert inner[-1].endswith("```\n\nDone.")
    # Every code line survives exactly once, in order.
    lines = [ln for c in chunks for ln in c.split("\n") if "value_" in ln]
    assert lines == body
    assert chunks[-1].endswith("Done.")


def test_code_line_longer_than_limit_stays_inside_fences():
    text = "```\n" + "y" * 700 + "\n```"
    chunks = split_message(text, 200)
    assert all(len(c) <= 200 for c in chunks)
    assert all(c.startswith("```\n") and c.endswith("\n```") for c in chunks)
    assert "".join(c[4:-4] for c in chunks) == "y" * 700


def test_tilde_fence_and_longer_backtick_fence():
    text = "~~~\n" + "\n".join("t" * 30 for _ in range(20)) + "\n~~~"
    chunks = split_message(text, 150)
    assert all(c.startswith("~~~") and c.endswith("~~~") for c in chunks)
    text = "````md\n```inner```\n" + "\n".join("q" * 30 for _ in range(20)) + "\n````"
    chunks = split_message(text, 150)
    assert all(c.startswith("````md") and c.endswith("````") for c in chunks)


@pytest.mark.parametrize("measure", [len, utf16_len])
def test_a_long_table_repeats_its_header_in_every_part(measure):
    """Rows after a cut are plain text to every converter without the header and
    delimiter lines above them: half of a long table reached Telegram and Slack as raw
    pipes. Each part that starts among the rows repeats them, and only them."""
    head = "| # | Product | Price 💶 |\n|---|:---|--:|\n"
    rows = [f"| {i} | Product name {i} | {i * 3}.99 |" for i in range(150)]
    text = "The list:\n\n" + head + "\n".join(rows) + "\n\nMore?"
    chunks = split_message(text, 700, measure=measure)
    assert len(chunks) >= 6 and all(measure(c) <= 700 for c in chunks)
    assert chunks[0].startswith("The list:\n\n" + head)
    assert all(c.startswith(head) for c in chunks[1:])
    assert [ln for c in chunks for ln in c.split("\n") if ln in rows] == rows
    shown = chunks[0] + "".join(c.removeprefix(head) for c in chunks[1:])
    assert "".join(shown.split()) == "".join(text.split())  # nothing else added or lost
    added = measure(head) * (len(chunks) - 1)
    assert len(chunks) <= math.ceil((measure(text) + added) / 699) + 1


def test_a_long_table_is_a_table_in_every_message_on_telegram_and_slack():
    """Rows without their header were shown as raw pipes: half of the table."""
    from channels.slack.mrkdwn import render_chunks
    from channels.telegram.send import rendered_parts

    rows = "\n".join(
        f"| {i} | Product name number {i} | ${i * 3}.99 | in stock |" for i in range(120)
    )
    answer = f"Prices:\n\n| # | Product | Price | Status |\n|---|---|---|---|\n{rows}\n\nMore?"
    telegram, slack = rendered_parts(answer), render_chunks(answer)
    assert len(telegram) >= 2 and len(slack) >= 2
    for part in telegram:
        tables = [e for e in part.entities if e["type"] == "pre"]
        assert len(tables) == 1, part.text[:80]
        assert re.match(r"#\s+\| Product\s+\| Price", part.text[tables[0]["offset"] :])
    assert all("*#* | *Product* | *Price* | *Status*\n" in chunk for chunk in slack)
    for shown in ("\n".join(p.text for p in telegram), "\n".join(slack)):
        assert not re.search(r"^\|", shown, re.M), "a row sent as raw Markdown"
        assert all(shown.count(f" Product name number {i} ") == 1 for i in range(120))


def test_never_cuts_inside_inline_markup():
    spans = ["**bold words here**", "`inline code span`", "[a link](https://example.com/x)"]
    text = " ".join(spans[i % 3] + f" filler{i}" for i in range(120))
    chunks = split_message(text, 200)
    for chunk in chunks:
        assert chunk.count("**") % 2 == 0
        assert chunk.count("`") % 2 == 0
        assert chunk.count("[") == chunk.count("](")


def test_multiline_bold_is_not_split_between_its_lines():
    filler = "\n".join(f"plain line {i}" for i in range(8))
    text = filler + "\n**bold starts\nand ends here**\n" + filler
    for limit in range(60, 200, 7):
        for chunk in split_message(text, limit):
            assert chunk.count("**") % 2 == 0, (limit, chunk)


def test_utf16_measure_counts_astral_emoji_as_two():
    text = "😀" * 3000
    chunks = split_message(text, 4096, measure=utf16_len)
    assert all(utf16_len(c) <= 4096 for c in chunks)
    assert "".join(chunks) == text
    assert len(chunks) == 2


def test_hard_cut_keeps_emoji_sequences_whole():
    family = "👨\u200d👩\u200d👧"
    thumbs = "👍🏽"
    text = (family + thumbs) * 200
    chunks = split_message(text, 1001, measure=utf16_len)
    assert len(chunks) == 3 and "".join(chunks) == text
    for chunk in chunks:
        assert not chunk.startswith(("\u200d", "🏽")) and not chunk.endswith("\u200d")


def test_rtl_and_zero_width_text_survives():
    text = ("שלום עולם مرحبا بالعالم\u200b zero\u200cwidth " * 200).strip()
    chunks = split_message(text, 500)
    assert all(len(c) <= 500 for c in chunks)
    assert _words(" ".join(chunks)) == _words(text)


def test_crlf_is_normalized():
    assert split_message("a\r\nb", 100) == ["a\nb"]


blocks = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=300),
    st.builds(
        lambda lang, lines: f"```{lang}\n" + "\n".join(lines) + "\n```",
        st.sampled_from(["", "python", "js"]),
        st.lists(st.text(alphabet="abc xyz=()`*", max_size=120), max_size=30),
    ),
)


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(blocks, min_size=1, max_size=12), limit=st.integers(32, 400))
def test_property_every_chunk_fits_and_fences_balance(parts, limit):
    text = "\n\n".join(parts)
    chunks = split_message(text, limit, measure=utf16_len)
    assert all(utf16_len(c) <= limit for c in chunks)
    assert all(c.strip() for c in chunks)
    if len(chunks) > 1 and not FENCE.search(text):
        assert "".join(_words(" ".join(chunks))) == "".join(_words(text.replace("\r\n", "\n")))


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("ab *_`[]()\n")), max_size=800),
    limit=st.integers(32, 120),
)
def test_property_no_text_lost_outside_code(text, limit):
    if FENCE.search(text):
        return
    chunks = split_message(text, limit)
    assert all(len(c) <= limit for c in chunks)
    assert "".join("".join(chunks).split()) == "".join(text.split())


def test_a_reply_of_backticks_is_cut_into_full_parts_not_one_per_character():
    text = "`" * 2500  # reads as a fence opening: its lines could never be reopened
    chunks = split_message(text, 2000)
    assert [len(c) for c in chunks] == [2000, 500]
    assert "".join(chunks) == text


def test_the_work_is_linear_in_the_text():
    """Counted in calls of the measure: one per character, a few per part (the old
    splitter measured every candidate prefix again, cubic on backticks)."""
    calls = 0

    def counting(text: str) -> int:
        nonlocal calls
        calls += 1
        return len(text)

    for text in ("`" * 3000, "[" * 3000, "**a " * 750, "```\n" + "``` x\n" * 600):
        calls = 0
        chunks = split_message(text, 100, measure=counting)
        assert calls <= len(text) + 10 * len(chunks) + 10, (text[:10], calls)
        assert len(chunks) <= math.ceil(len(text) / 100) + 1


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(
        st.sampled_from(
            [
                "`",
                "```",
                "~~~",
                "````py",
                "\n",
                "\n\n",
                " ",
                "*",
                "**",
                "[",
                "](",
                ")",
                "a",
                "word ",
                "😀",
                "\ud83d",
                "\ude00",
                "\u200d",
                "e\u0301",
                "👍🏽",
                "x" * 40,
            ]
        ),
        max_size=400,
    ),
    limit=st.integers(32, 300),
    utf16=st.booleans(),
)
def test_property_parts_fit_are_few_and_give_back_the_text(pieces, limit, utf16):
    """Any text: no part over the limit, at most ceil(len/limit) + 1 parts (limit - 1
    with UTF-16, where an astral character cannot be halved), and the parts are the
    text in order, less the whitespace at each cut, plus a fence's closing line at the
    end of a part and its opening line at the start of the next."""
    measure = utf16_len if utf16 else len
    text, parts = split_plan("".join(pieces), limit, measure=measure)
    chunks = split_message("".join(pieces), limit, measure=measure)
    assert chunks == [p.prefix + text[p.start : p.end] + p.suffix for p in parts]
    assert all(measure(c) <= limit for c in chunks)
    room = limit - 1 if utf16 else limit
    assert len(chunks) <= math.ceil(measure(text) / room) + 1
    seen = 0
    for part in parts:
        assert not text[seen : part.start].strip() and part.start < part.end
        if part.prefix:
            assert FENCE.match(part.prefix) and part.prefix.endswith("\n")
        if part.suffix:
            assert FENCE.match(part.suffix.lstrip("\n")) and part.suffix.startswith("\n")
        seen = part.end
    assert not text[seen:].strip()


async def test_parts_progress_resumes_in_a_new_process_and_then_forgets() -> None:
    from bot.errors import ChannelError
    from channels.format import PartsProgress
    from tests.fakes.slack_api import MemoryState

    state = MemoryState()
    posted: list[int] = []
    failures = [1]  # part 2 fails once

    async def post(i: int) -> str:
        if i in failures:
            failures.remove(i)
            raise ChannelError("part 2 failed")
        posted.append(i)
        return f"id{i}"

    with pytest.raises(ChannelError):
        await PartsProgress(state=state, prefix="x").post("msg:1", 3, post)
    assert state.data == {"x:parts:msg:1": "id0"}
    sent = await PartsProgress(state=state, prefix="x").post("msg:1", 3, post)  # restarted
    assert sent.ids == ("id0", "id1", "id2") and posted == [0, 1, 2]
    assert state.data == {}  # finished: nothing left behind
    await PartsProgress(state=state, prefix="x").post("msg:2", 1, post)
    assert state.data == {}  # a single part is never written down
