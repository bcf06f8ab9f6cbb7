"""The file machinery: JSON written back in the user's layout, delimited text blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault.install.files import BEGIN, END, ConfigError, drop_block, load_json, put_block

HERE = Path("config.json")


@pytest.mark.parametrize(
    "text",
    [
        '{\n  "a": 1,\n  "b": [\n    true\n  ]\n}\n',
        '{\n    "a": 1,\n    "b": {\n        "c": null\n    }\n}',
        '{\n\t"a": "ü",\n\t"b": {}\n}\n',
        '{\r\n  "a": 1,\r\n  "b": 2\r\n}\r\n',
        '{"a": 1, "b": [1, 2]}',
    ],
    ids=["two-spaces", "four-spaces-no-final-newline", "tabs", "crlf", "one-line"],
)
def test_json_is_written_back_in_the_layout_it_was_read_in(text):
    document, style = load_json(HERE, text.encode())
    assert style.dump(document).decode() == text


def test_an_empty_or_missing_file_gets_two_space_indentation():
    for data in (None, b"", b"{}", b"  \n"):
        document, style = load_json(HERE, data)
        document["x"] = 1
        assert style.dump(document) == b'{\n  "x": 1\n}\n'


def test_invalid_json_names_the_file_line_and_column():
    with pytest.raises(ConfigError, match=r"config\.json is not valid JSON: .* line 2, column 7"):
        load_json(HERE, b'{"a": 1,\n "b": }')


def test_a_block_is_appended_after_a_blank_line_and_dropped_without_a_trace():
    for original in ("", "# Notes\n", "# Notes", "# Notes\n\n", "a\r\nb\r\n"):
        with_block = put_block(HERE, original.encode() or None, "rules\nmore")
        text = with_block.decode()
        newline = "\r\n" if "\r\n" in original else "\n"
        assert newline.join([BEGIN, "rules", "more", END]) in text
        assert drop_block(HERE, with_block) in (original, original.rstrip() + newline)


def test_a_block_in_the_middle_is_replaced_in_place():
    text = f"top\n\n{BEGIN}\nold\n{END}\n\nbottom\n"
    assert (
        put_block(HERE, text.encode(), "new").decode() == f"top\n\n{BEGIN}\nnew\n{END}\n\nbottom\n"
    )
    assert drop_block(HERE, text.encode()) == "top\n\nbottom\n"


def test_a_lone_end_marker_is_refused():
    with pytest.raises(ConfigError, match="without"):
        put_block(HERE, f"x\n{END}\n".encode(), "rules")
