"""What a Telegram user sees of the model's Markdown: code exactly as written (a "<"
in code was shown as "\\<" when the code was a ~~~ fence, a longer fence, an indented
block or a double-backtick span, and an unpaired ``` in prose hid a later "<id>"), a "<"
the model escaped itself without a second backslash, an open task
as an empty box, and an answer whose conversion grows (a padded table) in formatted
parts that each fit, never as raw Markdown."""

from __future__ import annotations

import pytest

from channels.format import utf16_len
from channels.telegram.send import MAX_CHARS, render, rendered_parts

CODE_KEPT = [
    ('~~~html\n<div class="a">x & y</div>\n~~~', '<div class="a">x & y</div>'),
    ("````markdown\n```python\nx = 1 < 2\n```\n````", "```python\nx = 1 < 2\n```"),
    ('```python\nfence = "```"\nif a<b: pass\n```', 'fence = "```"\nif a<b: pass'),
    ("Use ``x < y ` z`` here", "x < y ` z"),
    (
        "Compile:\n\n    #include <stdio.h>\n    int x = a < b;\n",
        "#include <stdio.h>\nint x = a < b;",
    ),
    ("1. Save `a.c`:\n\n       #include <stdio.h>\n\n2. Build", "#include <stdio.h>"),  # in a list
]


@pytest.mark.parametrize(("markdown", "code"), CODE_KEPT)
def test_code_reaches_the_user_as_written(markdown: str, code: str) -> None:
    done = render(markdown)
    assert code in done.text
    assert "\\<" not in done.text
    assert any(e["type"] in ("pre", "code") for e in done.entities)


def test_an_angle_bracket_the_model_escaped_shows_without_its_backslash() -> None:
    assert render(r"Press \<Enter> and 2 \\< 3").text == r"Press <Enter> and 2 \< 3"


def test_an_unpaired_fence_mark_in_prose_hides_nothing_after_it() -> None:
    markdown = "Wrap code in ``` fences, e.g.:\n\n```\nx = 1\n```\n\nThen run /cancel <id>."
    assert render(markdown).text.rstrip().endswith("Then run /cancel <id>.")


def test_an_open_task_is_an_empty_box_and_a_done_one_is_ticked() -> None:
    text = render("- [ ] book flights\n- [x] renew passport").text
    assert text.split("\n")[:2] == ["\N{BALLOT BOX} book flights", "✅ renew passport"]


def test_an_answer_that_grows_in_conversion_comes_formatted_in_parts_that_fit() -> None:
    names = ["France", "Germany", "Italy", "Spain", "Netherlands"]
    rows = "\n".join(
        f"| {names[i % 5]} | City{i} | {i * 1.5:.1f} | **note** {i} |" for i in range(120)
    )
    answer = (
        "## Summary\n\nHere is the **table**:\n\n| Country | Capital | Population | Notes |"
        f"\n|---|---|---|---|\n{rows}\n\nLet me know if you need more."
    )
    assert utf16_len(render(answer[:MAX_CHARS]).text) > MAX_CHARS  # the case: it grows
    parts = rendered_parts(answer)
    assert len(parts) >= 3
    for part in parts:
        assert utf16_len(part.text) <= MAX_CHARS
        assert part.entities, "sent as raw Markdown"
        assert "**" not in part.text and "## " not in part.text
    shown = "\n".join(p.text for p in parts)
    assert all(f"City{i} " in shown for i in range(120))  # nothing lost
