"""Round 23 of hostile input (#13, #16): the pricing path's check of the source records a card cites, the source
schema's kind branches, the review's HEAD warnings, what tomllib costs or raises, and the cache key's libraries.

Each test keeps the input that broke main's code, asserting the exit status and the error line (or the output a
fresh run prints).
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest
from tests.cli_helpers import REPO, bad, copy_root, invoke
from tests.test_slip_34 import renderings  # one in-process review rendered per format

from passprice import cache, schema

R1 = "r1-qwen7b-h200"
H200 = "h200_sxm_141gb"
REVIEW = "passprice-card-review"  # kind = "registry", path = "facts/cards/README.md"; the H200 card cites it


def test_a_cited_registry_document_gone_or_a_fifo_is_refused_by_price_and_lock_as_by_check(tmp_path: Path) -> None:
    # Round 23: a source record of kind "registry" names a document of the registry by path. With the document gone
    # (or a FIFO in its place) `check` said so, while `price` and `lock` priced and locked on the citation, the
    # record's cached "valid" (the source-set entry, keyed by the records' bytes) answering for it run after run.
    root = copy_root(tmp_path)
    assert invoke("price", R1, root=root).exit_code == 0  # the cited records pass: the source-set entry is stored
    document = root / "facts" / "cards" / "README.md"
    document.unlink()
    card = root / "facts" / "cards" / f"{H200}.toml"
    line = (f"passprice: error: {card}: host.capacity.source: source '{REVIEW}' names no document of this registry: "
            f"sources/{REVIEW}.toml: source.path: facts/cards/README.md is not a file of this registry:"
            f" put the document there (source.path is read from the registry's top folder), or correct source.path")
    assert bad("price", R1, root=root) == [line]
    assert bad("lock", R1, "-o", str(tmp_path / "x.lock.toml"), root=root) == [line]
    assert not (tmp_path / "x.lock.toml").exists()
    os.mkfifo(document)
    assert bad("price", R1, "--json", root=root) == [
        line.replace("is not a file of this registry:" + line.split("is not a file of this registry:")[1],
                     "is a FIFO (named pipe), not a regular file of this registry")
    ]
    document.unlink()
    document.write_text("# cards\n", encoding="utf-8")
    assert invoke("price", R1, root=root).exit_code == 0


def test_a_source_kind_of_700_kb_is_shown_cut_on_every_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Round 23: kind = "x\u0007" * 100,000 made each line of `check` naming the record 500,510 characters long (the
    # enum error showed the whole value); price's line for the citing card too.
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", str(64 << 20))  # issue 13: past the 256 KiB cap; kept reachable
    root = copy_root(tmp_path)
    record = root / "sources" / "nvidia-h200-datasheet.toml"
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace('kind = "datasheet"', 'kind = "' + "x\\u0007" * 100_000 + '"'), encoding="utf-8")
    shown = "'" + "x\\x07" * 19 + "x\\x0… is not allowed here (one of 'datasheet'"  # repr cut to 100 characters
    lines = bad("price", R1, root=root)
    assert len(lines) == 1 and shown in lines[0] and len(lines[0]) < 1000
    result = invoke("check", root=root)
    assert result.exit_code == 2
    errors = result.stderr.splitlines()
    assert errors[0] == (
        f"passprice: error: sources/nvidia-h200-datasheet.toml: source.kind: {shown}, 'whitepaper', 'paper', "
        "'slides', 'abstract', 'documentation', 'web-page', 'blog-post', "
        "'benchmark-results', 'repository', 'pull-request', 'registry'); with kind 'registry' it needs path (missing "
        "here: path); with any other kind it needs url, date and retrieved (given here)"
    )
    assert max(len(line) for line in result.output.splitlines()) < 1000


def test_the_reviews_head_warnings_are_bounded(tmp_path: Path) -> None:
    # Round 23: 3,000 source records nothing cites on HEAD made `passprice diff --format markdown` a 318 KB pull-request
    # comment (3,001 warning lines), past GitHub's 65,536 characters; now the first 20 and a count.
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    for i in range(300):
        (head / "sources" / f"n{i:04d}.toml").write_text(
            '[source]\nkind = "web-page"\ntitle = "ttt"\nread = "read it all"\npublisher = "pp"\nurl = "unknown"\n'
            'date = "unknown"\nretrieved = "unknown"\n', encoding="utf-8")
    status, (markdown, shown, as_json) = renderings(REPO, "markdown", "text", "json", base=str(base), head=str(head))
    assert status == 0, markdown[-3000:]
    md = markdown.splitlines()
    # 300 records cited by no fact and check's line of the sources retrieved "unknown" (tests/test_fix154.py)
    assert "301 warnings of check on HEAD" in md[0]
    at = md.index("#### Warnings of passprice check on HEAD (not a failure)")
    assert md[at + 2] == "- ⚠️ warning: sources/n0000.toml: cited by no fact: cite it, or remove it"
    assert md[at + 21] == "- ⚠️ warning: sources/n0019.toml: cited by no fact: cite it, or remove it"
    assert md[at + 22] == "- and 281 more warnings: `passprice check` on HEAD lists each"
    assert sum("cited by no fact" in line for line in md) == 20
    # The 300 records added are counted, and the first 20 named (walkthrough 15 listed every one: 11,113 chars).
    # walkthrough 21: the first 20 added sources are described under Sources, the next 20 named, the rest counted
    assert md[-1].endswith(", `sources/n0039.toml` (added), and 260 more: the text review (`passprice diff`) lists "
                           "each"), md[-1]
    assert md[-1].startswith("Other files changed: `sources/n0020.toml` (added), ")
    assert sum(line.startswith("- `n00") and "(added, `sources/n00" in line for line in md) == 20
    assert len(markdown) < 10_000
    text = shown.splitlines()
    assert "  and 281 more warnings: passprice check on HEAD lists each" in text
    out = json.loads(as_json)
    assert len(out["head_warnings"]) == 20 and out["head_warnings_left_out"] == 281


def test_a_table_of_75000_keys_is_refused_without_asking_jsonschema_rs_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Round 23: a card of 75,000 one-key tables (964 KB) took `passprice facts` 2.5 s of CPU and 600 MB: jsonschema-rs
    # built each error with the 75,000-key table and a message naming every key. Now 1.2 s, 100 MB, one line.
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", str(64 << 20))  # issue 13: past the 256 KiB cap; kept reachable
    document = {f"t{i}": {"a": 1} for i in range(75_000)}
    assert schema.problems(document, "card") == [
        "(top level): a table of 75,000 keys (no passprice file holds one of more than 4,096, and this file does not "
        "validate): make it smaller"
    ]
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "zz.toml"
    card.write_text("".join(f"[memory.t{i}]\n" for i in range(40_000)), encoding="utf-8")  # 40,000 values: past
    assert bad("facts", "zz", root=root) == [  # MAX_EXPLAINED, so jsonschema-rs was asked; then the wide table's
        # line; since tests/test_bound111.py refused unparsed, its 40,000 dots past one each 16 bytes
        f"passprice: error: {card}: 40,000 dots outside strings and comments in 628,890 bytes, past the 39,369 a file "
        "of its size may hold (64 and one each 16 bytes; the densest shipped file holds one each 30): not parsed"
    ]


def test_the_table_bound_is_4096() -> None:
    assert schema.MAX_TABLE_KEYS == 4096


@pytest.mark.parametrize(("tail", "says"), [
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "not valid TOML: arrays or tables nested too deeply"),
    ("x = " + "1" * 5000 + "\n",
     "not valid TOML: Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits"),
])
@pytest.mark.parametrize("side", ["base", "head"])
def test_diff_of_an_unlocked_serving_nested_too_deeply_or_with_a_huge_integer_is_no_traceback(
    tmp_path: Path, tail: str, says: str, side: str
) -> None:
    # Round 23: the review reads each serving no lock names for the files it names (unlocked.named_files), catching
    # tomllib's TOMLDecodeError alone: nesting past the interpreter's recursion (RecursionError) or an integer past
    # 4,300 digits (ValueError) on either side was a traceback. schema.toml_loads now raises TOMLDecodeError for both.
    sides = {"base": copy_root(tmp_path / "base"), "head": copy_root(tmp_path / "head")}
    serving = sides[side] / "registry" / "servings" / "deepseek-v3-h200.toml"
    serving.write_text(serving.read_text(encoding="utf-8") + tail, encoding="utf-8")
    result = invoke("diff", str(sides["base"]), str(sides["head"]))
    assert result.exit_code == (2 if side == "head" else 0), result.output  # BASE's bad file is shown, not failed
    assert f"registry/servings/deepseek-v3-h200.toml: {says}" in result.output
    with pytest.raises(tomllib.TOMLDecodeError, match=says.removeprefix("not valid TOML: ").replace("(", r"\(")
                       .replace(")", r"\)")):
        schema.toml_loads(tail)


def test_the_cache_key_moves_with_an_installed_librarys_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Round 23: the key of a validated document or a built object held passprice's code and attrs' class builder, not
    # jsonschema, jsonschema-rs (whose verdicts make a document valid), cattrs (which structures the objects) or
    # tomlkit: an upgrade that changed a verdict kept serving the old one. Each library's installed version (its
    # dist-info folder's name) and its module file's stamp are now in the key, found without importing it.
    site = tmp_path / "site"
    (site / "fakelib").mkdir(parents=True)
    (site / "fakelib" / "__init__.py").write_text("", encoding="utf-8")
    (site / "fakelib-1.0.dist-info").mkdir()
    (site / "fakelib_other-9.dist-info").mkdir()
    before = cache._libraries_stamp(("fakelib", "absentlib"), [str(site)])
    assert before.endswith(":fakelib-1.0.dist-info|absentlib:-")
    assert before.startswith(f"fakelib:{site / 'fakelib' / '__init__.py'}:")
    (site / "fakelib-1.0.dist-info").rename(site / "fakelib-1.1.dist-info")
    assert cache._libraries_stamp(("fakelib", "absentlib"), [str(site)]).endswith(":fakelib-1.1.dist-info|absentlib:-")
    # the installed ones: each found, by version, and none imported to find it
    stamp = cache._libraries_stamp()
    for name in ("jsonschema", "jsonschema_rs", "cattrs", "tomlkit"):
        assert f"|{name}:" in f"|{stamp}" and f"{name}-" in stamp and f"{name}:-" not in stamp
    old = cache.key("card", b"{}", b"x")
    monkeypatch.setattr(cache, "_installed_stamp", lambda: stamp.replace("cattrs-", "cattrs-0."))
    assert cache.key("card", b"{}", b"x") != old


STACK = "llamacpp-cuda-2405"


@pytest.mark.parametrize(("cited", "says"), [
    ("no_such_record", "'no_such_record' is not a source id (lower-case letters, digits, '.' and '-', at most 80, "
                       "first a letter or digit): no record in sources/ can be named so; cite one by its file's name"),
    ("no-such-record", "no source 'no-such-record' ("),
])
def test_a_stack_citing_no_record_is_refused_by_price_lock_and_check(tmp_path: Path, cited: str, says: str) -> None:
    # Round 23: a stack's schema allows a source id with '_' (and 100 characters); sources.missing_ids skipped any id
    # that is not a source id, so `price --stack` and `lock --stack` took a stack fact citing "no_such_record" and the
    # lock written did not validate (reproduce refused it: "is not the id of the source record"). And `check` looked
    # at no stack's citations: it passed a stack citing "no-such-record", which price --stack refused.
    root = copy_root(tmp_path)
    stack = root / "facts" / "stacks" / f"{STACK}.toml"
    text = stack.read_text(encoding="utf-8")
    assert 'source = "xiongjiedai-gpu-benchmarks"' in text
    stack.write_text(text.replace('source = "xiongjiedai-gpu-benchmarks"', f'source = "{cited}"', 1), encoding="utf-8")
    key = "stack.memory.reserved.source"
    lines = bad("price", R1, "--stack", STACK, root=root)
    assert len(lines) == 1 and lines[0].startswith(f"passprice: error: {stack}: {key}: {says}")
    output = tmp_path / "x.lock.toml"
    assert bad("lock", R1, "--stack", STACK, "-o", str(output), root=root) == lines
    assert not output.exists()
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output
    assert f"  facts/stacks/{STACK}.toml: {key}: {says}" in "\n".join(
        line[: len(f"  facts/stacks/{STACK}.toml: {key}: {says}")] for line in result.stdout.splitlines()
    )


def test_fact_set_says_a_non_id_once(tmp_path: Path) -> None:
    # The card's schema says an id that is no source id; sources.missing_ids now says it too (for a stack, whose
    # schema allows it): `fact set` lists it once, the schema's line.
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / f"{H200}.toml"
    before = card.read_bytes()
    lines = bad("fact", "set", H200, "memory.capacity", "--value", "141", "--unit", "GB", "--provenance", "published",
                "--source", "no_such", "--locator", "the datasheet", root=root)
    assert lines == [f"passprice: error: {card}: memory.capacity.source: 'no_such' is not the id of a source record: "
                     "the name of a file sources/ID.toml"]
    assert card.read_bytes() == before


def test_calibrate_writes_no_stack_file_past_what_passprice_edits_in_place(tmp_path: Path) -> None:
    # Round 23: calibrate's write parsed the whole stack file with tomlkit (about 8 µs a byte), with no bound: a valid
    # 993 KB stack (its facts, then 900 KB of comment lines) took 7.9 s of CPU. It is bounded as `fact set` is.
    root = copy_root(tmp_path)
    stack = root / "facts" / "stacks" / f"{STACK}.toml"
    padded = stack.read_bytes() + b"#\n" * 20_000
    stack.write_bytes(padded)
    assert bad("calibrate", "--stack", STACK, root=root) == [
        f"passprice: error: {stack}: {len(padded):,} bytes, past the 131,072 passprice edits in place (keeping a "
        "file's layout costs about 8 µs a byte): edit it by hand, or make it smaller"
    ]
    assert stack.read_bytes() == padded


def test_an_invalid_record_and_a_gone_document_are_said_in_one_run(tmp_path: Path) -> None:
    # Every problem of a card's citations in one run: a record that does not validate hid another's missing document.
    root = copy_root(tmp_path)
    record = root / "sources" / "nvidia-h200-product-page.toml"
    record.write_text("".join(line for line in record.read_text(encoding="utf-8").splitlines(keepends=True)
                              if not line.startswith("url =")), encoding="utf-8")
    (root / "facts" / "cards" / "README.md").unlink()
    card = root / "facts" / "cards" / f"{H200}.toml"
    assert bad("price", R1, root=root) == [
        f"passprice: error: {card}: memory.capacity.source: source 'nvidia-h200-product-page' does not validate: "
        "sources/nvidia-h200-product-page.toml: source.url: missing (required)",  # relative, as check says (left29b)
        f"passprice: error: {card}: host.capacity.source: source '{REVIEW}' names no document of this registry: "
        f"sources/{REVIEW}.toml: source.path: facts/cards/README.md is not a file of this registry:"
        " put the document there (source.path is read from the registry's top folder), or correct source.path",
    ]
