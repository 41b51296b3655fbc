"""Round digest89 (session 44, issue 13): another checkout's pricing-model code is counted as the parser pays for it
before it is parsed: lines ended by ``\\r`` alone, a module in UTF-7, an f-string hidden behind a quote the pattern
misread, comments and string literals. Each hostile form is built here and refused unparsed, or counted by hand."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from passprice import pins


@pytest.fixture
def never_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``src/passprice`` folder for one module, with a cache of its own, where pins' parse of a module fails the
    test (the refusal must come before it), and the message's own count fixed (not the package's files read)."""
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(pins, "own_tokens", lambda: 279_000)
    parse = pins.ast.parse

    def never(*args: object, **kwargs: object) -> object:
        if "filename" in kwargs:  # pins' call (pytest's own reports parse too)
            raise AssertionError(f"parsed: {kwargs['filename']}")
        return parse(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pins.ast, "parse", never)
    package = tmp_path / "src" / "passprice"
    package.mkdir(parents=True)
    return package


def test_lines_ended_by_a_carriage_return_alone_are_counted(never_parsed: Path) -> None:
    """A lone ``\\r`` ends a line to Python's parser as ``\\n`` does, but was no token: 499,999 lines of ``a`` so
    ended (999,998 bytes) counted 499,999 tokens, were parsed, and a ``--no-cache check`` of their checkout took
    3.7 s of CPU and 925 MiB. ``\\r\\n`` is one line break, ``\\r`` and ``\\n`` one each; 230,001 lines of ``a\\r``
    (460,002 bytes) are 460,002 tokens, past the cap, refused unparsed."""
    assert pins._count_tokens(b"a\ra\r") == 4
    assert pins._count_tokens(b"a\r\na\r\n") == 4
    assert pins._count_tokens(b"a\n\r") == 3  # ``\n`` then a lone ``\r``: two lines
    (never_parsed / "locks.py").write_bytes(b"a\r" * 240_001)
    with pytest.raises(pins.CodeNotJudged) as refused:
        pins.pricing_model_digest(never_parsed)
    assert str(refused.value) == (
        "src/passprice/locks.py: 480,002 bytes; the pricing model's modules reach 480,002 tokens with it, past the "
        "480,000 passprice parses of another checkout's code (its own is 279,000)"
    )


def _utf7(text: str) -> bytes:
    """``text`` as a module in UTF-7 whose code is one base64 run (``+…-``): the way UTF-7 writes characters outside
    its direct set, which any character may be written as."""
    run = base64.b64encode(text.encode("utf-16-be")).rstrip(b"=")
    return b"# coding: utf-7\n+" + run + b"-\n"


def test_a_module_in_utf_7_is_counted_as_the_parser_reads_it(never_parsed: Path) -> None:
    """A coding declaration makes the parser decode the bytes first: in UTF-7, ``a\\n`` × 187,494 is one base64 run
    of 999,987 bytes, which counted 11 tokens and parsed as 187,494 statements (0.9 s, 344 MiB). The count now adds
    the decoded text's tokens to the bytes' own, each reading counted apart (a literal the bytes leave open does not
    swallow the decoded text). By hand: ``+AGEACgBhAAoAYQAK-`` is ``a\\na\\na\\n``; the bytes count 5 (the comment
    none; its line break, ``+``, the run, ``-``, a line break), the decoded text 8 (the comment none; 1 + 3 × 2 +
    1): 13."""
    small = _utf7("a\n" * 3)
    assert small == b"# coding: utf-7\n+AGEACgBhAAoAYQAK-\n"
    assert pins.ast.parse(small).body[2].value.id == "a"  # type: ignore[attr-defined]
    assert pins._count_tokens(small) == 5 + 8
    assert pins._count_tokens(b"# coding: latin-1\nx = 1\n") == 5 + 5  # both readings, no comment
    assert pins._count_tokens(b"# coding: utf-8\nx = 1\n") == 5  # UTF-8 is read as it is
    assert pins._count_tokens(b"# coding: no-such-codec\nx = 1\n") == 5  # the parser refuses it unparsed
    assert pins._count_tokens(b"# coding: punycode\nx = 1\n") == 5  # decoding it is quadratic; it adds no ASCII
    (never_parsed / "locks.py").write_bytes(_utf7("a\n" * 240_001))
    with pytest.raises(pins.CodeNotJudged) as refused:
        pins.pricing_model_digest(never_parsed)
    assert refused.value.tokens == (1 + 480_002 + 1) + 5  # decoded, the bytes' own
    # A triple quote the bytes leave open (the decoded text closes it in base64) hides nothing of the decoded text.
    opened = b"# coding: utf-7\n'''\n+" + base64.b64encode("'''\nx = f'{a}{a}'\n".encode("utf-16-be")) + b"-\n"
    assert pins._fstring_work(opened) == 2 * 8  # ``f'{a}{a}'``: two braces, a body of 8 bytes


def test_an_f_string_after_a_quoted_word_is_found(never_parsed: Path) -> None:
    """The literal pattern wanted a word boundary before a quote with no prefix, so ``'a'`` after ``(`` was not a
    literal and its closing quote (after the word ``a``) opened one: ``('a', f'{a}…')`` read as the literal
    ``', f'`` and the f-string's 200,000 fields as code, 0 of the f-string work (``pins.FSTRING_WORK``) that
    ``x = f'{a}…'`` counts, and Python 3.11 parses such an f-string in the square of its fields (past 30 s). Here
    79,000 fields (5 × 79,000 + 10 = 395,010 tokens, a brace 3: under the cap): 79,000 × 237,002 of work, refused
    unparsed."""
    assert pins._fstring_work(b"x = ('a', f'{a}{a}')\n") == 2 * 8  # two braces, 8 bytes
    assert pins._fstring_work(b"x = xf'{a}'\n") == 0  # the name ``xf`` and a plain string, as Python reads it
    (never_parsed / "locks.py").write_bytes(b"x = ('a', f'" + b"{a}" * 79_000 + b"')\n")
    # x = ( 'a' , f ' {a}… ' ) and the line break, a brace 3
    assert pins._count_tokens((never_parsed / "locks.py").read_bytes()) == 5 * 79_000 + 10
    with pytest.raises(pins.FStringsNotJudged) as refused:
        pins.pricing_model_digest(never_parsed)
    assert "f-strings reach 18,723,158,000 of the parser's work" in str(refused.value)


def test_what_the_parser_pays_for_by_hand() -> None:
    """What is counted (``pins._parsed_text``): a comment is dropped, a string literal that is not an f-string cut
    to its opening quote (its body is copied, not parsed), an f-string kept whole (its fields are parsed). A
    backslash before ``\\r\\n`` in a literal escapes the whole line break: the pattern's backslash took the ``\\r``
    alone, the ``\\n`` ended the literal, and its closing quote opened one that held ``;a;y=`` (code to the
    parser)."""
    assert pins._parsed_text(b"x = 'abc def'  # a comment 'q'\n") == b"x = '  \n"
    assert pins._parsed_text(b"def f():\n    '''Doc.\n    More.'''\n") == b"def f():\n    '\n"
    assert pins._parsed_text(b"y = rb'\\x00' + f'{a} b' + Rf\"{c}\"\n") == b"y = ' + f'{a} b' + Rf\"{c}\"\n"
    assert pins._parsed_text(b"x='a\\\r\nb';a;y='c'\n") == b"x=';a;y='\n"
    assert pins._count_tokens(b"x='a\\\r\nb';a;y='c'\n") == 10  # x = ' ; a ; y = ' and the line break
    assert pins._count_tokens(b"s = '''\n#\n'''  # '\n") == 4  # s = ''' and the last line break


def test_a_bypassed_cache_keeps_no_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ``--no-cache`` each module's tree was compressed and keyed for a cache that stored nothing (20 to 30 ms
    for a checkout at the cap, 36 ms for the package's own trees); the digest is the same either way."""
    from passprice import cache

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    package = tmp_path / "passprice"
    package.mkdir()
    (package / "locks.py").write_text("from passprice import serving\nX = serving.Y\n")
    (package / "serving.py").write_text("Y = 1.5\n")
    kept = pins._compute(str(package))

    def never(*args: object) -> None:
        raise AssertionError("a tree kept or looked up with the cache bypassed")

    monkeypatch.setattr(pins, "_keep_tree", never)
    monkeypatch.setattr(pins, "_kept_tree", never)
    monkeypatch.setattr(cache, "_enabled", False)
    assert pins._compute(str(package), capped=True) == kept == pins._compute(str(package), kept=False)


def test_a_checkout_not_judged_walks_the_running_package_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal's message names the package's own tokens (``pins.own_tokens``), whose module names came from a walk
    of every tree of the package: a ``--no-cache check`` of a checkout not judged walked them twice, once for the
    message and once for the running digest (0.44 s more than a checkout of one tiny module). The running digest is
    taken first now, and its walk names the modules."""
    import functools

    from passprice import cache

    monkeypatch.setattr(cache, "_enabled", False)
    monkeypatch.setattr(pins, "_OWN_MODULES", [])
    # no build record (an install's pricing_model.json gives the digest and the module names unwalked: CI's clean
    # clone had one, so the package was walked 0 times there): the walk this test counts is the one without it
    monkeypatch.setattr(pins, "_recorded", lambda folder: None)
    monkeypatch.setattr(pins, "_running", functools.cache(lambda: pins._digest(str(pins.PACKAGE))))
    pins.own_tokens.cache_clear()
    walks: list[str] = []
    trees = pins._trees

    def counted(folder: str, *args: object, **kwargs: object) -> dict[str, str]:
        walks.append(folder)
        return trees(folder, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pins, "_trees", counted)
    monkeypatch.setattr(pins, "MODEL_TOKENS", 10)
    package = tmp_path / "src" / "passprice"
    package.mkdir(parents=True)
    (package / "pins.py").write_text("LOCK_FORMAT = 2\n", encoding="utf-8")
    (package / "locks.py").write_bytes(b"x = [a, a, a, a, a]\n")  # 13 tokens
    said = pins._checkout_model(tmp_path)
    assert said is not None and said[0].startswith("not judged: src/passprice/locks.py: 20 bytes; "), said
    assert f"(its own is {pins.own_tokens():,})" in said[0]
    assert walks.count(str(pins.PACKAGE)) == 1, walks
    pins.own_tokens.cache_clear()  # counted here under a walk of its own making: not kept for later tests


def test_a_build_s_record_names_the_package_s_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From a wheel the running digest is its build's record, no tree walked: the modules the record names with a
    file are the package's pricing modules, and a refusal's message counts them without a walk (0.43 s of a
    ``--no-cache check`` of a checkout not judged, from a wheel)."""
    import json

    record = pins.record()  # its walk names the modules too: forgotten below
    walked = tuple(sorted(pins._trees(str(pins.PACKAGE), kept=False)))
    monkeypatch.setattr(pins, "RECORD", tmp_path / "pricing_model.json")  # no project file above tmp_path
    pins.RECORD.write_text(json.dumps(record), encoding="utf-8")
    monkeypatch.setattr(pins, "_OWN_MODULES", [])
    assert pins._recorded(str(pins.PACKAGE)) == record["digest"]
    assert [walked] == pins._OWN_MODULES and "pins" in walked

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("walked")

    monkeypatch.setattr(pins, "_trees", never)
    assert pins.pricing_modules() == walked


def test_a_checkout_at_the_cap_is_digested_and_named(tmp_path: Path) -> None:
    """The costliest form found a token, one name a line, at the cap itself (240,000 lines of ``a``: 480,000 tokens,
    not past it) is parsed, and its digest is the one the same folder's trees give uncapped: ``check`` names it on
    each lock's "pricing model: same" line (a whole ``--no-cache check`` of it 1.94 s installed, 2.27 s editable, at
    load 7-11: docs/PERFORMANCE.md, round digest89)."""
    package = tmp_path / "src" / "passprice"
    package.mkdir(parents=True)
    (package / "pins.py").write_text("LOCK_FORMAT = 2\n", encoding="utf-8")
    (package / "locks.py").write_bytes(b"a\n" * 240_000)
    assert pins._count_tokens((package / "locks.py").read_bytes()) == pins.MODEL_TOKENS
    said = pins._checkout_model(tmp_path)
    theirs = pins._compute(str(package), kept=False)
    assert said == (theirs, pins.pricing_model_digest())
    assert pins.checkout_note(tmp_path) == (
        f" (the running passprice's; this checkout's src/passprice prices with {theirs[:19]}…: see the warning)"
    )
