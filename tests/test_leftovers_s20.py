"""Session 20's leftovers (issues 13 and 16): each test builds its reproducer and asserts the words, the value and
the exit status.

1. The markdown review escaped ``check``'s lines whole, so the passprice command a line quotes
   (```passprice calibrate --stack S --dry-run```) read as ``\\`passprice calibrate …\\``` with its backslashes; it
   is a code span now, and the rest of the line (names, user text) stays escaped.
2. ``sweep`` wrote its integral figures as floats (``position`` 512.0, ``held_bytes`` 4912001024.0,
   ``capacity_bytes`` 141000000000.0) in CSV and JSON: integers now; a mean position between tokens stays a float.
3. A user's own Qwen3-30B-A3B Q4_K_M header (``passprice synth -o FILE``, written with gguf.GGUFWriter) differed from
   the shipped entry in ``general.name`` alone (the file's name), so the measured routing record's scope refused it;
   the scope now matches the same model, and a checkpoint it refuses is told what differs.
4. The markdown review's caps (the fact table's rows, the facts' details, added records, warnings, other files'
   names) summed past GitHub's 65,536 characters: a pull request hitting them all made an 81 KB comment. The whole
   comment is bounded now, the longest sections cut, saying what was cut and where to see all of it.
5. ``added_records`` parsed each added checkpoint entry twice (to load it, then for its origin): once now.
6. ``check`` resolved the serving of every measured run naming a routing record, each refused alike: runs of one
   setting (checkpoint, routing, card, batch, positions) are resolved once, each still named in its own line.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.tables import markdown_prose
from test_diff import commit_all, git

STACK_FILE = "facts/stacks/llamacpp-cuda-2405.toml"


def _registry(path: Path) -> Path:
    """A git registry (the checkout's facts, registry, locks, sources and schema) on branch ``pr`` off ``main``."""
    path.mkdir(parents=True)
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "the checkout's registry")
    git(path, "checkout", "-q", "-b", "pr")
    return path


def test_a_command_in_a_check_line_is_code_in_the_markdown_review(tmp_path: Path) -> None:
    path = _registry(tmp_path / "registry")
    stack = path / STACK_FILE
    text = stack.read_text(encoding="utf-8")
    stack.write_text(text.replace("[overhead.pass]\nvalue = 0.0\n", "[overhead.pass]\nvalue = 5.0\n"), encoding="utf-8")
    commit_all(path, "a fitted fact edited by hand")
    result = invoke("diff", "main", "--format", "markdown", root=path)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert "#### ❌ HEAD fails passprice check (1 problem)" in lines
    line = next(x for x in lines if x.startswith(f"- {STACK_FILE}: overhead.pass: re-fitted"))
    assert line.endswith("review the re-fit with `passprice calibrate --stack llamacpp-cuda-2405 --dry-run`, then "
                         "run it without --dry-run)")
    assert "\\`" not in line  # was: \`passprice calibrate --stack llamacpp-cuda-2405 --dry-run\`


def test_only_passprice_commands_are_code_and_the_rest_stays_escaped() -> None:
    hostile = "`rm -rf` <img src=x> @octocat [a](b) `passprice fact recompute 'a`b <b>'`; see `passprice check`."
    assert markdown_prose(hostile) == (
        "\\`rm -rf\\` &lt;img src=x&gt; @&#8203;octocat \\[a\\](b) ``passprice fact recompute 'a`b <b>'``; see "
        "`passprice check`."
    )
    assert markdown_prose("no `passprice` close") == "no `passprice` close"
    assert markdown_prose("`passprice\nx` as `passprice_x`") == "`passprice x` as \\`passprice_x\\`"


SWEEP = ("sweep", "r1-qwen7b-h200", "--cards", "h200_sxm_141gb", "--positions", "512,100.5", "--batches", "1,2")


def test_a_sweep_writes_whole_counts_as_integers_in_csv() -> None:
    result = invoke(*SWEEP)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    columns = lines[0].split(",")
    rows = [dict(zip(columns, line.split(","), strict=True)) for line in lines[1:]]
    assert [(r["position"], r["batch"], r["held_bytes"], r["capacity_bytes"]) for r in rows] == [
        ("512", "1", "4912001024", "141000000000"),  # was 512.0, 4912001024.0, 141000000000.0
        ("512", "2", "5146882048", "141000000000"),
        ("100.5", "1", "4912001024", "141000000000"),
        ("100.5", "2", "5146882048", "141000000000"),
    ]
    assert rows[0]["tokens_per_s"] == "1017.6098359889786" and rows[0]["host_s"] == "0.0"  # floats stay floats


def test_a_sweep_writes_whole_counts_as_json_integers() -> None:
    result = invoke(*SWEEP, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [(r["position"], r["held_bytes"], r["capacity_bytes"]) for r in rows] == [
        (512, 4912001024, 141000000000), (512, 5146882048, 141000000000),
        (100.5, 4912001024, 141000000000), (100.5, 5146882048, 141000000000),
    ]
    assert [type(r["held_bytes"]) for r in rows] == [int] * 4 and type(rows[0]["position"]) is int
    assert type(rows[2]["position"]) is float and type(rows[0]["host_s"]) is float


PRICE = ("price", "--card", "h200_sxm_141gb", "--routing", "qwen3-30b-a3b-measured", "--json")


def test_a_users_own_copy_of_the_shipped_model_is_in_the_routing_records_scope(tmp_path: Path) -> None:
    config = str(REPO / "examples" / "configs" / "qwen3-30b-a3b.json")
    mine = tmp_path / "my-qwen3.gguf"
    assert invoke("synth", config, "--mix", "Q4_K_M", "-o", str(mine)).exit_code == 0
    shipped = invoke(*PRICE, "--checkpoint", "qwen3-30b-a3b-q4_k_m")
    assert shipped.exit_code == 0, shipped.output
    own = invoke(*PRICE, "--checkpoint", str(mine))
    assert own.exit_code == 0, own.output  # was 1: OutOfScope (general.name 'my-qwen3.gguf', not the entry's name)
    assert json.loads(own.stdout)["tokens_per_s"] == json.loads(shipped.stdout)["tokens_per_s"]
    other = tmp_path / "my-qwen3-q8.gguf"
    assert invoke("synth", config, "--mix", "Q8_0", "-o", str(other)).exit_code == 0
    refused = invoke(*PRICE[:-1], "--checkpoint", str(other))
    assert refused.exit_code == 1, refused.output
    assert refused.stderr == (
        "passprice: refused: OutOfScope: routing record 'qwen3-30b-a3b-measured' applies to checkpoint "
        "qwen3-30b-a3b-q4_k_m only (facts/routing/qwen3-30b-a3b-measured.toml: checkpoints), not "
        f"'{other}' (its header is not qwen3-30b-a3b-q4_k_m's: "
        "338 tensors by name, type or dims, first output.weight): its figures were not established for that "
        f"checkpoint; use a routing record whose checkpoints list '{other}', or add it to that list once the figures "
        "are shown to hold for it\n"
    )


def test_a_review_parses_an_added_checkpoint_entry_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tomllib

    path = _registry(tmp_path / "registry")
    text = (path / "registry" / "checkpoints" / "qwen3-30b-a3b-q4_k_m.toml").read_text(encoding="utf-8")
    (path / "registry" / "checkpoints" / "my-qwen3.toml").write_text(
        text.replace('name = "qwen3-30b-a3b-q4_k_m"', 'name = "my-qwen3"'), encoding="utf-8")
    commit_all(path, "an entry added")
    parsed = []
    loads = tomllib.loads

    def counted(text: str, **kw: object) -> dict[str, object]:
        if 'name = "my-qwen3"' in text:
            parsed.append(text)
        return loads(text, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(tomllib, "loads", counted)
    from passprice import schema

    plain = schema._plain_document

    def plain_counted(text: str) -> dict[str, object] | None:
        # an entry's lines around its tensor rows are read by the plain reader since tests/test_cold124.py
        document = plain(text)
        if document is not None and 'name = "my-qwen3"' in text:
            parsed.append(text)
        return document

    monkeypatch.setattr(schema, "_plain_document", plain_counted)
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    for run in ("cold", "warm"):  # the entry's header built (and kept), then read from the cache of built objects
        parsed.clear()
        result = invoke("diff", "main", "--json", root=path)
        assert result.exit_code == 0, (run, result.output)
        assert json.loads(result.stdout)["added_records"]["registry/checkpoints/my-qwen3.toml"].startswith(
            "qwen3moe, 579 tensors, 18.55 GB of weights, 128 routed experts (8 a token); origin: Synthetic, header "
            "only: built by passprice synth")
        assert len(parsed) == 1, run  # was 2 cold (load_checkpoint, then again for its origin)


def test_a_review_hitting_every_cap_at_once_fits_one_github_comment(tmp_path: Path) -> None:
    from test_newcomer_21 import SOURCE

    path = _registry(tmp_path / "registry")
    for card in sorted((path / "facts" / "cards").glob("*.toml")):  # every citation of every card: rows and details
        text = card.read_text(encoding="utf-8")
        # 400 characters more, or as many as the schema's 1,000 a locator allows (cite72's Ampere locators quote
        # their text: up to 698 characters): the content " [" + n x + "]" after 'locator = "' (11 characters).
        card.write_text(re.sub(r'^(locator = ".*)"$', lambda m: m.group(1) + " [" + "x" * min(
            400, 1000 - 3 - (len(m.group(1)) - 11)) + ']"', text, flags=re.M), encoding="utf-8")
    for i in range(25):  # added records past their cap, and other files named past theirs
        (path / "sources" / f"at-{i:02d}.toml").write_text(
            SOURCE.replace('read = "Section 5, Routing analysis, Figure 7."', f'read = "{"r" * 2000}"'),
            encoding="utf-8")
    commit_all(path, "every cap at once")
    result = invoke("diff", "main", "--format", "comment", root=path)
    assert result.exit_code == 0, result.output[-2000:]
    comment = result.stdout.rstrip("\n")
    assert len(comment) <= 65_000, len(comment)  # was 81,379 characters
    lines = comment.splitlines()
    # walkthrough 30: Sources names the documents the changed facts cite. Since the shipped stack lock (its
    # H200 citations re-pinned, one more lock under Locks) the longest section, Facts, loses 69 lines and the whole
    # fits: Sources is no longer cut (before: Facts 68 lines, Sources 3); cite72's longer A100 locators: 93 -> 83;
    # cite83's A100 rate locators (Table 4 rows, each padded up to the 1,000 cap): 83 -> 70
    # cite90 (the H100 SXM and A100 facts re-cited to two new records, their rows quoted whole): 70 -> 65
    assert lines[2] == ("✂️ Cut to fit GitHub's 65,536 characters: Facts (69 lines): `passprice diff` without "
                        "`--format markdown`, or with `--json`, shows all of it")
    cut = lines.index("#### Derived from changed facts") - 2
    assert lines[cut] == ("- ✂️ and 69 more lines of this section, cut to keep this comment within GitHub's 65,536 "
                          "characters: `passprice diff` (text) or `passprice diff --json` shows all of it")
    sources = lines[lines.index("#### Sources") + 2:]
    sources = sources[:sources.index("")]
    # every added source kept, the cited documents after them, whole: 20 named, the section's own cap's line last
    added = [line.split("`")[1] for line in sources if "(added, `sources/at-" in line]
    assert added == [f"at-{i:02d}" for i in range(20)]
    # cite74 (session 42): the L40S card cites one more record (its deviceQuery run), the 20th cited listed; the AMD
    # whitepaper, 20th before, is among the 9 (was 8) more. cite81 (session 43): the GA102 and Ada cards cite the
    # Ampere and Ada tuning guides, the Ampere one listed 12th, so the L40S datasheet is the 20th and the deviceQuery
    # record among the 11 (was 9) more
    # cite90: two records more cited (the H100 product page, the A100 edition), one fewer (the A100 datasheet): the
    # H200 datasheet is the 20th listed, the L40S datasheet among the 12 (was 11) more
    # cite102: one record more cited (the H200 product page): it is the 20th listed, the H200 datasheet among the 13
    assert sources[-2].startswith("- `nvidia-h200-product-page` (cited): NVIDIA H200 GPU product page")
    assert sources[-1] == "- and 13 more sources: `passprice sources` lists each"
    assert any(line.startswith("- `nvidia-ampere-tuning-guide` (cited): ") for line in sources)
    assert sum(1 for line in sources if " (cited): " in line) == 20
    for heading in ("#### Derived from changed facts", "#### Locks", "#### Sources",
                    "#### Warnings of passprice check on HEAD (not a failure)"):
        assert heading in lines  # the other sections whole
    assert lines[-1].startswith("Other files changed: `sources/at-20.toml` (added)")
    text = invoke("diff", "main", root=path)
    assert text.exit_code == 0 and "✂️" not in text.stdout
    assert text.stdout.count("x" * 400) > comment.count("x" * 400)  # the text review shows what the comment cut


RUN = '''
[[run]]
id = "l20.{i}"
stack = "llamacpp-cuda-2405"
card = "h200_sxm_141gb"
checkpoint = "gpt-oss-20b-mxfp4"
routing = "qwen3-30b-a3b-measured"
batch = {batch}
positions = [0, 128]
tokens_per_s = 160.5
locator = "a made-up figure"
'''


def test_check_resolves_identical_refused_runs_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import measurements

    root = copy_root(tmp_path)
    head = ('#:schema ../../schema/measurement.schema.json\n[source]\nname = "made up"\n'
            'source = "xiongjiedai-gpu-benchmarks"\n')
    runs = "".join(RUN.format(i=i, batch=1 if i < 49 else 2) for i in range(50))  # 49 alike, 1 at another batch
    (root / "registry" / "measurements" / "l20.toml").write_text(head + runs, encoding="utf-8")
    calls = []
    serving = measurements.run_serving

    def counted(*args: object) -> object:
        calls.append(args[1])
        return serving(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(measurements, "run_serving", counted)
    monkeypatch.setenv("PASSPRICE_NO_MEMO", "1")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output[-2000:]
    lines = [x for x in result.stderr.splitlines() if "l20.toml" in x]
    # a file's first 20 run problems are listed, the rest counted on one line (tests/test_attack187.py)
    assert len(lines) == 21
    assert lines[-1] == ("passprice: error: registry/measurements/l20.toml: and 30 more problems of its runs, "
                         "not listed")
    for i, line in enumerate(lines[:-1]):
        assert line.startswith(f"passprice: error: registry/measurements/l20.toml: run.{i}.routing: routing record "
                               "'qwen3-30b-a3b-measured' applies to checkpoint qwen3-30b-a3b-q4_k_m only")
    assert "not 'gpt-oss-20b-mxfp4': its figures were not established" in lines[0]  # another architecture
    assert len([r for r in calls if r.source == "l20"]) == 2  # was 50: one a run


def test_an_edit_waits_for_a_busy_file_and_refuses_only_one_held_past_its_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two editors of twelve edits each, under load, starved one past the single 10 s wait ("another edit has held it
    for 10 s", test_hostile's concurrency test, twice this session): the wait is per file now. Here another editor
    lands an edit every 0.1 s (the file renamed into place, the new one locked before the old is let go) for 0.9 s
    against a wait of 0.3 s: the waiter is not refused and gets the last file; one file held 0.6 s is refused. The
    editor's edits land by the waiter's clock (:class:`EditClock`): an editor thread not run for 0.3 s on a busy
    machine let the waiter's wait on one file run out."""
    import fcntl
    import os

    from edit_clock import EditClock
    from passprice import edit
    from passprice.edit import locked
    from passprice.errors import InputError

    card = tmp_path / "card.toml"
    card.write_text("n = 0\n", encoding="utf-8")
    holding = card.open("rb")
    fcntl.flock(holding.fileno(), fcntl.LOCK_EX)

    def land(i: int) -> None:
        nonlocal holding
        fresh = tmp_path / f".card.{i}"
        fresh.write_text(f"n = {i}\n", encoding="utf-8")
        handle = fresh.open("rb")
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        os.replace(fresh, card)
        holding.close()  # the old file let go only after the new one is held: the waiter never gets a turn
        holding = handle
        if i == 9:
            holding.close()

    clock = EditClock((0.1 * i, lambda i=i: land(i)) for i in range(1, 10))
    with monkeypatch.context() as m:
        m.setattr(edit, "time", clock)
        with locked(card, wait_s=0.3):
            waited = clock.monotonic()
            assert card.read_text(encoding="utf-8") == "n = 9\n"
    assert waited > 0.85  # it waited through all nine edits, past three of its 0.3 s waits

    with card.open("rb") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX)
        with pytest.raises(InputError, match=r"card\.toml: another edit has held it for 0\.3 s; nothing written"), \
                locked(card, wait_s=0.3):
            pass


def test_a_card_removed_while_an_edit_waits_is_named_as_removed_not_as_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack round 41: a card removed (its lock still held by the remover's open file) while an edit waited read
    "another edit has held it for 0.2 s"; the edit now opens the path again and is refused as the path now is. The
    card is removed 0.05 s into the wait by the waiter's clock (:class:`EditClock`): a remover thread not run for
    0.2 s on a busy machine removed it after the wait had run out."""
    import fcntl

    from edit_clock import EditClock
    from passprice import edit
    from passprice.edit import locked
    from passprice.errors import InputError

    card = tmp_path / "card.toml"
    card.write_text("n = 0\n", encoding="utf-8")
    with card.open("rb") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX)
        monkeypatch.setattr(edit, "time", EditClock([(0.05, card.unlink)]))
        with pytest.raises(InputError) as refused, locked(card, wait_s=0.2):
            pass
    line = str(refused.value)
    assert "card.toml" in line and "held it" not in line, line
    assert re.search(r"no such|not found|does not exist", line, re.IGNORECASE), line
