"""left92: session 43's leftovers (issue 13), each reproducer built in its test.

- (1) a one-line text holding U+FFF0–U+FFF8 (unassigned, default-ignorable: invisible) passed ``fact set
  --locator`` (exit 0, written); a source's ``url``, ``copies`` and ``repository`` holding a tag character
  (U+E0041) passed ``check`` and ``audit`` (exit 0): their patterns are their own, and stated no ``one-line`` format.
"""

from __future__ import annotations

from pathlib import Path

from cli_helpers import bad, copy_root

#: What a one-line text holding an invisible character is told.
ONE_LINE_SAID = ("holds a control character, a line separator, a bidi control or an invisible character (a newline, a "
                 "tab, U+2028, U+202E, U+200B …): write it on one line")


# --- (1) U+FFF0–U+FFF8 in a one-line text, a tag character in an address ---------------------------------------------


def test_1_the_unassigned_specials_are_refused_in_a_one_line_text(tmp_path: Path) -> None:
    # before: `fact set … --locator 'Table<U+FFF0> 1'` exit 0, the locator written (ONE_LINE named U+FFF9–U+FFFB
    # alone of the Specials block; U+FFF0–U+FFF8 are Default_Ignorable_Code_Point too)
    import re

    from passprice.schema import ONE_LINE, ecma_pattern

    one_line = re.compile(ecma_pattern(ONE_LINE))
    for code in range(0xFFF0, 0xFFFC):
        assert not one_line.search(f"Table{chr(code)} 1"), hex(code)
    for ch in "\ufffc\ufffd\uffef\ufe0f":  # the object replacement and replacement characters print; so do these
        assert one_line.search(f"Table{ch} 1"), repr(ch)
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = card.read_bytes()
    for ch, shown in (("\ufff0", "\\ufff0"), ("\ufff8", "\\ufff8")):
        assert bad("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.9", "--unit", "1", "--provenance",
                   "estimated", "--source", "nvidia-h200-datasheet", "--locator", f"Table{ch} 1", root=root) == [
            f"passprice: error: {card}: streams.read.locator: 'Table{shown} 1' {ONE_LINE_SAID}"]
    assert card.read_bytes() == before


def test_1_a_tag_character_in_a_source_address_is_refused(tmp_path: Path) -> None:
    # before: url = "https://…/README.md<U+E0041>" passed audit --source (exit 0) and check: the address patterns
    # (ECMA-262 classes without the `u` flag) cannot name a range past U+FFFF, and they stated no one-line format
    from passprice.schema import problems

    record = {"title": "A title", "kind": "web-page", "read": "read it all", "publisher": "Someone",
              "date": "2024", "retrieved": "2024-01-02", "commit": "unknown",
              "url": "unknown", "repository": "https://example.org/r"}
    described = {"url": 'where the document is, or "unknown"',
                 "copies": "an http:// or https:// address (a copy with no address is said in read or note)",
                 "repository": "a document kept in a git repository: the repository's address (facts locate files "
                               "in it)"}
    for suffix, shown in (("\U000e0041", "\\U000e0041"), ("\U000e007f", "\\U000e007f"), ("\ufff3", "\\ufff3"),
                          ("\u200b", "\\u200b")):
        address = f"https://example.org/a{suffix}"
        for key, said in described.items():
            value = [address] if key == "copies" else address
            found = problems({"source": {**record, key: value}}, "source")
            where = "source.copies.0" if key == "copies" else f"source.{key}"
            assert found == [f"{where}: 'https://example.org/a{shown}' is not {said}"], (key, found)
    assert problems({"source": {**record, "url": "https://example.org/a\U000e0100"}}, "source") == []  # a selector
    root = copy_root(tmp_path)
    source = root / "sources" / "alvarobartt-cuda-device-query.toml"
    text = source.read_text(encoding="utf-8")
    url = "https://github.com/alvarobartt/cuda-device-query/blob/785c09f81d56cedba22460cb643b23ae0e1ba3b3/README.md"
    assert text.count(f'url = "{url}"') == 1
    source.write_text(text.replace(f'url = "{url}"', f'url = "{url}\U000e0041"'), encoding="utf-8")
    assert bad("audit", "--source", "alvarobartt-cuda-device-query", root=root) == [
        f"passprice: error: {source}: source.url: '{url}\\U000e0041' is not where the document is, or \"unknown\""]
