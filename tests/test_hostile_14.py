"""Attack round 14 (issue 13) on the newest code: each test builds the input that broke it and asserts what
passprice now does with it (exit status and the error line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from any_text import any_text  # st.text()'s alphabet without its per-process codec table
from cli_helpers import bad, copy_root, invoke

# --- a checkpoint entry named like a GGUF file ------------------------------------------------------------------------


def _entry_named(root: Path, name: str) -> None:
    """``registry/checkpoints/NAME.toml``: gemma3-270m's entry under ``name`` (what ``import --name NAME`` writes)."""
    source = (root / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml").read_text(encoding="utf-8")
    assert source.count('name = "gemma3-270m-q4_k_m"') == 1
    (root / "registry" / "checkpoints" / f"{name}.toml").write_text(
        source.replace('name = "gemma3-270m-q4_k_m"', f'name = "{name}"'), encoding="utf-8"
    )


def test_a_checkpoint_entry_named_like_a_gguf_file_is_used_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``import FILE --name x.gguf`` writes ``registry/checkpoints/x.gguf.toml``, and then every use of the name was
    read as a file of the working folder: ``price --checkpoint x.gguf``, ``header x.gguf``, a serving naming it,
    ``checkpoints`` (which listed nothing) and ``check`` all said ``x.gguf: no such file`` (exit 2). A name with no
    folder in it that is a registered entry is the entry, whatever the working folder holds (a file of that name is
    ``./x.gguf``), as a registry file's names are judged."""
    root = copy_root(tmp_path)
    _entry_named(root, "x.gguf")
    serving = (root / "registry" / "servings" / "gemma3-270m-h100.toml").read_text(encoding="utf-8")
    assert 'checkpoint = "gemma3-270m-q4_k_m"' in serving
    (root / "registry" / "servings" / "xg.toml").write_text(
        serving.replace('checkpoint = "gemma3-270m-q4_k_m"', 'checkpoint = "x.gguf"'), encoding="utf-8"
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "x.gguf").write_bytes(b"not a GGUF file at all")  # a file of the same name where the command runs
    monkeypatch.chdir(work)

    listed = invoke("checkpoints", "--json", root=root)
    assert listed.exit_code == 0, listed.output
    rows = {row["name"]: row for row in json.loads(listed.stdout)["checkpoints"]}
    assert rows["x.gguf"]["sha256"] == rows["gemma3-270m-q4_k_m"]["sha256"]
    assert rows["x.gguf"]["tensors"] == 236

    named = invoke("price", "--checkpoint", "x.gguf", "--card", "h100_sxm5_80gb", "--json", root=root)
    original = invoke("price", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "h100_sxm5_80gb", "--json", root=root)
    assert named.exit_code == 0 and original.exit_code == 0, named.output
    assert json.loads(named.stdout)["tokens_per_s"] == json.loads(original.stdout)["tokens_per_s"]

    by_serving = invoke("price", "xg", "--json", root=root)
    assert by_serving.exit_code == 0, by_serving.output
    assert json.loads(by_serving.stdout)["tokens_per_s"] == pytest.approx(11734.401309911658, rel=1e-12)

    header = invoke("header", "x.gguf", root=root)
    assert header.exit_code == 0 and "236" in header.stdout, header.output
    # the working folder's file is still there to read, by a path
    bad("header", "./x.gguf", root=root, says="x.gguf")
    checked = invoke("check", root=root)
    assert "no such file" not in checked.output and checked.exit_code == 0, checked.output


# --- a registry folder that is a link to a folder outside the registry ----------------------------------------------


def test_a_registry_folder_linked_outside_the_registry_is_not_read(tmp_path: Path) -> None:
    """A single record linked to a file outside the registry was refused unread (round 10), but a whole folder of
    the registry linked outside was not looked at: with ``facts/cards`` a link to a folder of the machine, ``check``
    validated and quoted its files, ``fact show`` and ``price`` read them. The folder is named on one line (exit 2)
    and each file read through it is refused by the line a linked file gets; a root reached through a link, and a
    link inside the registry, still read — but since slip round 29 a registry document a source names
    (``facts/cards/README.md``, the card review) reached through a link is refused wherever it is read (a review
    reads it through git, where the link holds only its target's name), so ``price`` of a card citing that source is
    refused by that line."""
    root = copy_root(tmp_path)
    outside = tmp_path / "outside" / "cards"
    outside.parent.mkdir()
    (root / "facts" / "cards").rename(outside)
    (root / "facts" / "cards").symlink_to(outside)
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert (f"passprice: error: facts/cards: a symbolic link (or a folder reached through one) to {outside}, outside "
            f"the registry ({root}): a registry's files lie inside it (copy the files in, or link to ones inside)\n"
            ) in checked.stderr
    bad("cards", root=root, says=f"{root}/facts/cards: a symbolic link (or a folder reached through one) to {outside}")
    line = (f"{root}/facts/cards/h100_sxm5_80gb.toml: lies in {outside}, outside the registry ({root}), through a "
            "symbolic link")
    bad("fact", "show", "h100_sxm5_80gb", "memory.bandwidth", root=root, says=line)
    bad("price", "gemma3-270m-h100", root=root, says=line)

    root = copy_root(tmp_path / "second")  # a fresh root: a resolved folder is kept for the process
    inside = root / "registry" / "cards-kept-here"
    (root / "facts" / "cards").rename(inside)
    (root / "facts" / "cards").symlink_to(inside)
    linked_root = tmp_path / "linked-root"
    linked_root.symlink_to(root)
    shown = invoke("fact", "show", "h100_sxm5_80gb", "memory.bandwidth", root=linked_root)
    assert shown.exit_code == 0 and "3.35 TB/s" in shown.stdout, shown.output
    bad("price", "gemma3-270m-h100", "--json", root=linked_root,
        says=(f"{linked_root}/facts/cards/h100_sxm5_80gb.toml: host.capacity.source: source 'passprice-card-review' "
              "names no document of this registry:"))
    priced = invoke("price", "gemma3-270m-h100", "--json", root=linked_root)
    assert ("source.path: facts/cards/README.md passes through a symbolic link (facts/cards): a document of this "
            "registry is a file at its own path") in priced.stderr
    (root / "sources" / "passprice-card-review.toml").unlink()  # nothing cites the document through the link now
    for card in inside.glob("*.toml"):
        text = card.read_text(encoding="utf-8")
        card.write_text(text.replace('"passprice-card-review"', '"passprice-stack-calibration"'), encoding="utf-8")
    priced = invoke("price", "gemma3-270m-h100", "--json", root=linked_root)
    assert priced.exit_code == 0, priced.output
    assert json.loads(priced.stdout)["tokens_per_s"] == pytest.approx(11734.401309911658, rel=1e-12)


# --- a lock file that does not read ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"garbage = [\n", "not valid TOML"),
        (b"\xff\xfe[lock]\n", "UTF-8"),
        (b'title = "no lock table"\n', "lock"),
        (None, "FIFO"),
        ("folder", "folder"),
    ],
)
def test_a_lock_file_that_does_not_read_stops_the_price_it_may_lock(
    tmp_path: Path, content: bytes | str | None, says: str
) -> None:
    """The lock index looked only at lock files whose ``[lock]`` table read and left the others to ``check``: a
    damaged ``locks/gemma3-270m-h100.lock.toml`` (bad TOML, bytes that are not UTF-8, no ``[lock]`` table, a FIFO,
    a folder) turned the lock off, and ``price`` of its serving, with a card fact changed under it, said "no lock
    of this serving in locks/" and exited 0. A lock file that does not read may lock any serving: every price under
    the registry's locks is refused by its first line (exit 2), and ``check`` still names it."""
    import os

    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h100_sxm5_80gb.toml"
    text = card.read_text(encoding="utf-8")
    assert text.count("value = 3.35\n") == 1
    card.write_text(text.replace("value = 3.35\n", "value = 4.35\n"), encoding="utf-8")  # a change under the lock
    lock = root / "locks" / "gemma3-270m-h100.lock.toml"
    lock.unlink()
    if content is None:
        os.mkfifo(lock)
    elif content == "folder":
        lock.mkdir()
    else:
        assert isinstance(content, bytes)
        lock.write_bytes(content)
    why = "(a lock file that does not read may lock gemma3-270m-h100: fix it (passprice check says what is wrong) or"
    lines = bad("price", "gemma3-270m-h100", root=root, says=f"{lock}")
    assert len(lines) == 1 and why in lines[0] and says in lines[0], lines
    # any serving: the file may lock it as well
    other = bad("best", "r1-qwen7b-h200", root=root, says=f"{lock}")
    assert "may lock r1-qwen7b-h200" in other[0]
    checked = invoke("check", root=root)
    assert checked.exit_code == 2 and "locks/gemma3-270m-h100.lock.toml" in checked.stderr, checked.output
    # an unregistered serving is under no lock, and still priced
    free = invoke("price", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "h100_sxm5_80gb", root=root)
    assert free.exit_code == 0, free.output


# --- diff: copies of a card packed in a few bytes each; records that are symbolic links ------------------------------


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    import subprocess

    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo,
                          check=True, capture_output=True, input=None if stdin is None else stdin.encode())  # fmt: skip
    return done.stdout.decode().strip()


def _repository(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "the registry")
    return root


def test_a_commit_of_thousands_of_copies_of_a_card_is_refused_before_any_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git stores a copy of a file as one more tree entry (20,000 copies of a card: a 48 KB tree object, 780 KB
    listed), and each costs ``diff`` about 3.5 ms of CPU to read, validate, recheck and compare: ``diff main pr`` over
    such a commit ran past a minute (2,000 copies: 13.5 s of CPU). A side holding more than
    ``gitread.MAX_SIDE_FILES`` (4,000) files passprice reads is refused in one line before a byte of them is read,
    the count raised by ``PASSPRICE_MAX_SIDE_FILES``; the work tree's side is counted the same way."""
    from passprice import gitread

    root = _repository(tmp_path)
    # (serving files: past gitread.MAX_SIDE_FACT_FILES, cards are refused by their own count, test_cold_4.py)
    blob = _git(root, "hash-object", "-w", "registry/servings/gemma3-270m-h100.toml")
    copies = "".join(f"100644 {blob}\tregistry/servings/c{i:05d}.toml\n" for i in range(gitread.MAX_SIDE_FILES))
    _git(root, "update-index", "--index-info", stdin=copies)
    _git(root, "commit", "-qm", "copies")
    read: list[int] = []
    real = gitread.read_blobs
    monkeypatch.setattr(gitread, "read_blobs", lambda top, sizes, **k: read.append(len(sizes)) or real(top, sizes, **k))
    head = _git(root, "rev-parse", "HEAD")[:12]
    monkeypatch.chdir(root)
    lines = bad("diff", "main~1", "main", root=root,
                says=f"{head}: more than 4,000 files passprice reads, the most a side of a diff may hold")  # fmt: skip
    assert len(lines) == 1 and lines[0].endswith("set PASSPRICE_MAX_SIDE_FILES to allow more"), lines
    assert max(read) < 200, read  # BASE's files only: none of HEAD's 4,000 copies
    monkeypatch.setenv("PASSPRICE_MAX_SIDE_FILES", "50")
    bad("diff", "main~1", "main~1", root=root, says="more than 50 files passprice reads")
    monkeypatch.setenv("PASSPRICE_MAX_SIDE_FILES", "nan")
    bad("diff", "main~1", "main~1", root=root,
        says="PASSPRICE_MAX_SIDE_FILES: 'nan' is not a number of files (a whole number from 1 to 10^9)")  # fmt: skip
    monkeypatch.setenv("PASSPRICE_MAX_SIDE_FILES", "160")
    ok = invoke("diff", "main~1", "main~1", root=root)  # the registry alone: about 130 files
    assert ok.exit_code == 0 and "no changes to facts" in ok.stdout, ok.output
    _git(root, "checkout", "-q", "main~1")
    for i in range(60):
        (root / "facts" / "cards" / f"c{i}.toml").write_bytes((root / "facts" / "cards" / "a40.toml").read_bytes())
    bad("diff", "HEAD", root=root, says=f"{root}: more than 160 files passprice reads")


@pytest.mark.parametrize("target", ["h200_sxm_141gb.toml", "/outside.toml"])
def test_a_record_that_is_a_symbolic_link_is_named_by_diff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           target: str) -> None:  # fmt: skip
    """``diff`` left symbolic links out of both sides, where ``check`` and ``price`` in that checkout read a link
    inside the registry: a card added as a link reviewed as "no changes to facts" (exit 0), and a card turned into a
    link to another card's file as "removed". A link where passprice reads a file is named, at the revision or in
    the work tree (exit 2)."""
    root = _repository(tmp_path)
    card = root / "facts" / "cards" / "h100_sxm5_80gb.toml"
    card.unlink()
    card.symlink_to(target)
    monkeypatch.chdir(root)
    says = "facts/cards/h100_sxm5_80gb.toml: a symbolic link"
    bad("diff", "main", root=root, says=f"{says}; passprice diff compares the files themselves (commit the file, or "
        "the folder's files, in place of the link)")  # fmt: skip
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "a link")
    head = _git(root, "rev-parse", "HEAD")[:12]
    bad("diff", "main~1", "main", root=root, says=f"{says} at {head}; passprice diff compares the files themselves")



def test_a_registry_folder_that_is_a_symbolic_link_is_named_by_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``facts/cards`` a link to a folder inside the registry (``check``: all holds), ``diff`` of the work tree
    did not walk the link: every card "removed", the cards "added" as other files, and the eight locks priced from
    the cards all the same, exit 0. At a revision the link was left out as well. It is named, exit 2. Since slip
    round 29 ``check`` refuses it too, by the registry document a source names through the link
    (``facts/cards/README.md``)."""
    root = _repository(tmp_path)
    (root / "facts" / "cards").rename(root / "registry" / "cards-here")
    (root / "facts" / "cards").symlink_to("../registry/cards-here")
    monkeypatch.chdir(root)
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert ("source.path: facts/cards/README.md passes through a symbolic link (facts/cards)") in checked.stderr
    lines = bad("diff", "main", root=root, says="facts/cards: a symbolic link; passprice diff compares the files")
    assert len(lines) == 1, lines
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "cards moved behind a link")
    head = _git(root, "rev-parse", "HEAD")[:12]
    bad("diff", "main~1", "main", root=root, says=f"facts/cards: a symbolic link at {head}; passprice diff compares")

# --- simulate --json of a trace under 1 MB ----------------------------------------------------------------------------

_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(allow_nan=True, allow_infinity=True), any_text(max_size=6))  # fmt: skip
_FLAT = st.dictionaries(any_text(max_size=4), _SCALAR, max_size=4)
# Records sharing one key order (as simulate writes its requests): jsontext writes those column by column.
_SAME_KEYS = st.lists(any_text(max_size=4), min_size=1, max_size=4, unique=True).flatmap(
    lambda keys: st.lists(st.fixed_dictionaries({k: _SCALAR for k in keys}), min_size=2, max_size=4))
_DOCUMENT = st.recursive(
    _SCALAR | st.lists(_FLAT, max_size=4) | _SAME_KEYS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text(max_size=4), inner, max_size=3)
    | st.tuples(inner, inner),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(_DOCUMENT)
def test_jsontext_writes_what_json_dumps_writes(data: object) -> None:
    """``simulate --json`` of a 900 KB trace (15,000 requests arriving at once) printed 19 MB through ``json``'s
    pure-Python indented encoder and encoded it a second time to check it finite: 2.86 s of CPU against 1.31 s for
    its text (issue 13: 2 s). ``jsontext.dumps`` writes its lists of flat records with the C encoder and checks
    finiteness as it encodes; its text is ``json.dumps(data, indent=2)``'s, whatever the document."""
    import json

    from passprice import jsontext

    assert jsontext.dumps(data) == json.dumps(data, indent=2)
    try:
        expected = json.dumps(data, indent=2, allow_nan=False)
    except ValueError:
        with pytest.raises(ValueError):
            jsontext.dumps(data, allow_nan=False)
    else:
        assert jsontext.dumps(data, allow_nan=False) == expected


def test_simulate_json_of_many_requests_is_json_dumps_text(tmp_path: Path) -> None:
    """The 15,000-request document, cut to 400 requests here: every record as the indented encoder writes it."""
    import json

    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(f'{{"arrival_s": {i / 1000}, "prompt_tokens": {1 + i % 7}, "output_tokens": 3}}\n'
                             for i in range(400)), encoding="utf-8")  # fmt: skip
    result = invoke("simulate", "gemma3-270m-h100", "--trace", str(trace), "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert len(document["policies"]["static"]["records"]) == 400
    assert document["policies"]["continuous"]["records"][399]["output_tokens"] == 3
    assert result.stdout == json.dumps(document, indent=2) + "\n"


# --- a working folder that no longer exists ------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("cards",), ("price", "gemma3-270m-h100"), ("init", "reg")])
def test_a_removed_working_folder_is_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            args: tuple[str, ...]) -> None:  # fmt: skip
    """In a shell standing in a folder that was removed, ``os.getcwd`` fails, and the command line's last resort
    for an error no command named said ``passprice: error: standard output: No such file or directory`` (exit 2):
    the wrong thing. The root lookup says what is wrong; ``--root`` given as an absolute path still works."""
    from click.testing import CliRunner

    from passprice.cli import cli

    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    here.rmdir()
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr == ("passprice: error: the working folder no longer exists (it was removed while the shell "
                             "stood in it): cd to a folder that exists, or give --root and absolute paths\n")
    root = copy_root(tmp_path)
    priced = CliRunner().invoke(cli, ["--root", str(root), "price", "gemma3-270m-h100", "--json"])
    assert priced.exit_code == 0, priced.output
    assert json.loads(priced.stdout)["tokens_per_s"] == pytest.approx(11734.401309911658, rel=1e-12)


def test_the_history_of_a_card_turned_into_a_link_is_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fact show CARD PATH --history`` resolved the card's file before asking git for its log: for a card a commit
    turned into a symbolic link to another card's file it showed that other card's history under this card's name
    (h100_sxm5_80gb's memory.bandwidth "4.8 TB/s since the first commit, nvidia-h200-datasheet", where the h100's own
    file said 3.35 TB/s from the H100 datasheet until the link). The history is the file's own: the commit that made
    it a link is a version that does not read, saying so, and the work tree's link adds nothing."""
    root = _repository(tmp_path)
    card = root / "facts" / "cards" / "h100_sxm5_80gb.toml"
    card.unlink()
    card.symlink_to("h200_sxm_141gb.toml")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "h100 is an h200 now")
    monkeypatch.chdir(root)
    result = invoke("fact", "show", "h100_sxm5_80gb", "memory.bandwidth", "--history", "--json", root=root)
    assert result.exit_code == 0, result.output
    versions = json.loads(result.stdout)["versions"]
    assert [v["subject"] for v in versions] == ["h100 is an h200 now", "the registry"]
    assert versions[0]["error"] == (f"facts/cards/h100_sxm5_80gb.toml at {_git(root, 'rev-parse', 'HEAD')[:12]}: a "
                                    "symbolic link, not the file itself (its figures are another file's)")
    assert versions[1]["fact"]["value"] == 3.35 and versions[1]["fact"]["source"] == "nvidia-h100-product-page"
    assert "nvidia-h200-datasheet" not in result.stdout


# --- a stack's per-card facts --------------------------------------------------------------------------------


def test_a_stack_giving_facts_for_more_cards_than_the_bound_is_refused(tmp_path: Path) -> None:
    """A stack's ``[cards.NAME]`` tables were unbounded: a 1.04 MB stack file giving ``share.read`` for 6,772 cards
    that do not exist took ``check --no-cache`` 3.5 s of CPU (1.55 s without it) and ``best --stack`` 1.3 s (0.5 s).
    The schema bounds them at 1,024 cards; one more is refused naming the file and key."""
    root = copy_root(tmp_path)
    stack = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    table = ('\n[cards.c{}.share.read]\nvalue = 0.5\nunit = "1"\nprovenance = "estimated"\n'
             'source = "xiongjiedai-gpu-benchmarks"\nlocator = "somewhere in it"\n')  # fmt: skip
    text = stack.read_text(encoding="utf-8")
    stack.write_text(text + "".join(table.format(i) for i in range(1024)), encoding="utf-8")
    held = invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--json", root=root)
    assert held.exit_code == 0, held.output
    stack.write_text(text + "".join(table.format(i) for i in range(1025)), encoding="utf-8")
    lines = bad("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", root=root,
                says=f"{stack}: cards: ")  # fmt: skip
    assert lines[0].endswith("has too many properties"), lines
