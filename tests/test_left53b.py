"""Issue 13's leftovers: bad input is one line naming its file and key, exit 2, no traceback; a guess is refused.

1. A serving file's class of ``limit = 1`` without a position priced mean position 0.5 (exit 0) where ``--limit 1``
   is refused (``leaves no whole mean position``): it is bad input naming the file and ``contexts.N.limit`` in every
   command that reads the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke

GEMMA = REPO / "registry" / "servings" / "gemma3-270m-h100.toml"
LONE = ("contexts.{i}.limit: 1 leaves no whole mean position to price: a sequence allowed 1 position holds row 0 "
        "alone, and the default mean position limit / 2 is 0.5; give limit = 2 or more, or position = 0")


# --- (1) a serving file's limit = 1 ----------------------------------------------------------------------------------


def _one_limit(tmp_path: Path, *, second: bool = False, position: str | None = None) -> Path:
    """The gemma serving with its first class (``second``: its second) at ``limit = 1`` and no position (or
    ``position``)."""
    text = GEMMA.read_text(encoding="utf-8")
    head, first, other = text.split("[[contexts]]")
    changed = "\nshare = {share}\n" + (f"position = {position}\n" if position is not None else "") + "limit = 1\n\n"
    if second:
        other = changed.format(share=0.25)
    else:
        first = changed.format(share=0.75)
    path = tmp_path / "one.toml"
    path.write_text("[[contexts]]".join([head, first, other]), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "words",
    [
        ["price"], ["price", "--json"], ["best"], ["max-batch"], ["compare"], ["sweep"],
        ["roofline", "h100_sxm5_80gb"], ["simulate", "--synthetic", "3", "--seed", "1"], ["new-serving", "zz"],
        ["price", "--position", "0"],
    ],
)
def test_file_limit_one_refused_by_file_and_key(tmp_path: Path, words: list[str]) -> None:
    path = _one_limit(tmp_path)
    lines = bad(*words, str(path), root=copy_root(tmp_path) if words[0] == "new-serving" else REPO)
    assert lines == [f"passprice: error: {path}: {LONE.format(i=0)}"]


def test_file_limit_one_second_class(tmp_path: Path) -> None:
    path = _one_limit(tmp_path, second=True)
    assert bad("price", str(path)) == [f"passprice: error: {path}: {LONE.format(i=1)}"]


def test_file_limit_one_with_position_zero_prices_row_zero(tmp_path: Path) -> None:
    """``position = 0`` of ``limit = 1`` is a whole position (the line's advice): priced, exit 0."""
    path = _one_limit(tmp_path, position="0")
    result = invoke("price", str(path))
    assert result.exit_code == 0, result.output
    assert "0.75 × contexts at mean position 0 of a 1 limit;" in result.stdout


def test_cli_limit_one_line_unchanged() -> None:
    """The option's own line, from the same wording."""
    lines = bad("price", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "h100_sxm5_80gb", "--limit", "1")
    assert lines == [
        "passprice: error: Invalid value for --limit: 1 leaves no whole mean position to price: a sequence allowed 1 "
        "position holds row 0 alone, and the default mean position limit / 2 is 0.5; give --limit 2 or more, or "
        "--position 0 (see 'cli price --help')"
    ]


# --- (2) a lock past the size cap, its path once ---------------------------------------------------------------------


def test_lock_past_the_cap_on_head_is_named_once(tmp_path: Path) -> None:
    """``diff`` of two folders, HEAD's lock past 256 KiB: ``locks/X does not read on HEAD: larger than …``, the path
    once (it was ``locks/X does not read on HEAD: locks/X: larger than …``); the listing keeps the reader's line."""
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    lock = head / "locks" / "gemma3-270m-h100.lock.toml"
    lock.write_bytes(lock.read_bytes() + b"#" * 300_000 + b"\n")
    size = lock.stat().st_size
    rel = "locks/gemma3-270m-h100.lock.toml"
    said = (f"larger than 256 KiB, the most a lock file may hold ({size:,} bytes; PASSPRICE_MAX_FILE_BYTES=BYTES "
            "raises the cap)")
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"passprice: error: {rel} does not read on HEAD: {said}"]
    assert result.stderr.count(rel) == 1
    assert f"  does not read on HEAD:\n    {rel}: {said}\n" in result.stdout


# --- (3) the advice after a refusal gives numbers as typed -----------------------------------------------------------


def test_best_lock_advice_gives_numbers_as_typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--position 4000`` was repeated ``--position 4000.0`` (``--kv-bytes 1``: ``1.0``); a fraction keeps its
    digits. The advice, pasted, locks."""
    import shlex

    monkeypatch.chdir(tmp_path)
    result = invoke("lock", "gpt-oss-20b-h200", "--stack", "llamacpp-cuda-2405", "-o", "y.lock.toml",
                    "--position", "4000", "--kv-bytes", "1", "--memory-use", "0.9")
    assert result.exit_code == 1 and not (tmp_path / "y.lock.toml").exists(), result.output
    advice = ("passprice lock gpt-oss-20b-h200 --best --stack llamacpp-cuda-2405 --position 4000 --kv-bytes 1 "
              "--memory-use 0.9 -o y.lock.toml")
    assert result.stderr.splitlines()[0].endswith(f"; or lock its best price inside the stack's range: `{advice}`")
    followed = invoke(*shlex.split(advice)[1:])
    assert followed.exit_code == 0, followed.output
    assert (tmp_path / "y.lock.toml").exists()


@pytest.mark.parametrize(
    ("value", "word"),
    [(4000.0, "4000"), (0.0, "0"), (0.9, "0.9"), (1e-05, "1e-05"), (2.5e20, "250000000000000000000"), (3, "3"),
     ("x y.lock.toml", "'x y.lock.toml'"), ("-o.toml", "./-o.toml")],
)
def test_typed_word(value: object, word: str) -> None:
    from passprice.cli.checking import _typed_word

    assert _typed_word(value) == word


# --- (4) --checkpoint PATH read as a record's relative path ----------------------------------------------------------

GGUF = REPO / "tests" / "data" / "qwen35-27b-like.header.gguf"


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    """A registry (facts, registry, locks) with ``models/q.gguf``, a folder ``models/dir.gguf``, a FIFO
    ``models/fifo.gguf`` and a subfolder ``sub/deeper``."""
    import os
    import shutil

    root = copy_root(tmp_path)
    (root / "models").mkdir()
    shutil.copyfile(GGUF, root / "models" / "q.gguf")
    (root / "models" / "dir.gguf").mkdir()
    os.mkfifo(root / "models" / "fifo.gguf")
    (root / "sub" / "deeper").mkdir(parents=True)
    return root


def _price(root: Path, where: Path, checkpoint: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(where)
    result = invoke("price", "--checkpoint", checkpoint, "--card", "h200_sxm_141gb", root=root)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("below", [".", "sub", "sub/deeper"])
@pytest.mark.parametrize("checkpoint", ["models/q.gguf", "registry/checkpoints/r1-distill-qwen-7b-q4_k_m.toml"])
def test_a_relative_checkpoint_is_read_from_the_root_too(registry: Path, below: str, checkpoint: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """From a subfolder ``models/q.gguf`` said "no such file here (…); … has one: run there, or give …" and an entry's
    path "no such checkpoint file"; ``--card facts/cards/X.toml`` read the root's card."""
    if not (registry / checkpoint).exists():
        checkpoint = next(iter(sorted((registry / "registry" / "checkpoints").glob("*.toml")))).relative_to(
            registry).as_posix()
    code, out, err = _price(registry, registry / below, checkpoint, monkeypatch)
    assert code == 0, err
    assert out.splitlines()[0] == f"{checkpoint} on h200_sxm_141gb (NVIDIA H200 SXM 141GB)"


def test_the_same_checkpoint_prices_alike_from_the_root_and_below(registry: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    top = _price(registry, registry, "models/q.gguf", monkeypatch)
    deep = _price(registry, registry / "sub" / "deeper", "models/q.gguf", monkeypatch)
    assert top == deep and top[0] == 0


@pytest.mark.parametrize("below", [".", "sub"])
@pytest.mark.parametrize("checkpoint", ["models/none.gguf", "models/none", "registry/checkpoints/none.toml"])
def test_a_missing_checkpoint_names_both_places(registry: Path, below: str, checkpoint: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = _price(registry, registry / below, checkpoint, monkeypatch)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"passprice: error: {checkpoint}: no such checkpoint file (looked for from the working folder and from the "
        f"registry's root, {registry.resolve()})"]


@pytest.mark.parametrize("below", [".", "sub", "sub/deeper"])
def test_a_folder_or_fifo_checkpoint_is_refused_by_its_path(registry: Path, below: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Below the root they said "models/dir.gguf: no such file"; the root's folder or FIFO is named by its path (under
    the absolute ``--root`` the tests give, absolute)."""
    up = "" if below == "." else f"{registry}/"
    code, _, err = _price(registry, registry / below, "models/dir.gguf", monkeypatch)
    assert code == 2 and err.splitlines() == [f"passprice: error: {up}models/dir.gguf: is a folder, not a file"]
    code, _, err = _price(registry, registry / below, "models/fifo.gguf", monkeypatch)
    assert code == 2 and err.splitlines() == [
        f"passprice: error: {up}models/fifo.gguf: is a FIFO (named pipe), not a regular file: passprice reads regular "
        "files only"]


def test_the_working_folder_s_file_comes_first(registry: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``sub/models/q.gguf`` (another checkpoint) is read from ``sub``, not the root's ``models/q.gguf``."""
    import shutil

    (registry / "sub" / "models").mkdir()
    shutil.copyfile(REPO / "tests" / "data" / "qwen3next-80b-a3b-like.header.gguf",
                    registry / "sub" / "models" / "q.gguf")
    monkeypatch.chdir(registry / "sub")
    sub = invoke("header", "models/q.gguf", "--json", root=registry)
    monkeypatch.chdir(registry)
    top = invoke("header", "models/q.gguf", "--json", root=registry)
    assert sub.exit_code == top.exit_code == 0
    assert sub.stdout != top.stdout


def test_a_path_leading_out_is_not_looked_for_in_the_root(registry: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = _price(registry, registry, "../models/q.gguf", monkeypatch)
    assert code == 2 and err.splitlines() == ["passprice: error: ../models/q.gguf: no such file"]


def test_a_lock_of_a_checkpoint_read_from_the_root_reproduces(registry: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Written from ``sub`` outside the registry, it records the root-relative path and reproduces from the root."""
    out = tmp_path / "q.lock.toml"
    monkeypatch.chdir(registry / "sub")
    made = invoke("lock", "--checkpoint", "models/q.gguf", "--card", "h200_sxm_141gb", "-o", str(out), root=registry)
    assert made.exit_code == 0, made.output
    assert 'checkpoint = "models/q.gguf"' in out.read_text(encoding="utf-8").splitlines()
    monkeypatch.chdir(registry)
    again = invoke("reproduce", str(out), root=registry)
    assert again.exit_code == 0, again.output


def test_found_from_below_without_root_the_folder_is_named_from_here(registry: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from passprice.cli import cli

    monkeypatch.chdir(registry / "sub")
    result = CliRunner().invoke(cli, ["price", "--checkpoint", "models/dir.gguf", "--card", "h200_sxm_141gb"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["passprice: error: ../models/dir.gguf: is a folder, not a file"]
    result = CliRunner().invoke(cli, ["header", "models/q.gguf"])
    # the header's first line names the file read: the root's
    assert result.exit_code == 0 and result.stdout.startswith(f"{registry.resolve()}/models/q.gguf\n"), result.output


# --- (5) a record named by a path: decided by its file, not its file name --------------------------------------------

H200 = "h200_sxm_141gb"


@pytest.fixture
def two_folders(tmp_path: Path) -> Path:
    """A registry whose ``other/`` holds another card of the registry card's file name (``memory.bandwidth``
    4.7), and ``other/H200_SXM_141GB.toml``, the registry's own card file by another spelling (a hard link, as a
    file system that ignores case reads ``facts/cards/H200_SXM_141GB.toml``)."""
    import os

    root = copy_root(tmp_path)
    (root / "other").mkdir()
    text = (root / "facts" / "cards" / f"{H200}.toml").read_text(encoding="utf-8")
    head, tail = text.split("[memory.bandwidth]\nvalue = 4.8\n")
    (root / "other" / f"{H200}.toml").write_text(f"{head}[memory.bandwidth]\nvalue = 4.7\n{tail}", encoding="utf-8")
    os.link(root / "facts" / "cards" / f"{H200}.toml", root / "other" / "H200_SXM_141GB.toml")
    return root


@pytest.mark.parametrize("spelled", [H200, f"./facts/cards/{H200}.toml", f"facts/cards/{H200}.toml",
                                     "other/H200_SXM_141GB.toml"])
def test_audit_fact_same_file_two_spellings(two_folders: Path, spelled: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hard link's spelling said "--fact H200_SXM_141GB:memory.bandwidth: no such fact (H200_SXM_141GB is no
    card record of this registry)", exit 2."""
    monkeypatch.chdir(two_folders)
    result = invoke("audit", "--fact", f"{spelled}:memory.bandwidth", root=two_folders)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"audit of fact {H200}:memory.bandwidth"
    assert lines[1].startswith("  4.8 TB/s (published); nvidia-h200-product-page")


def test_audit_fact_of_another_folder_s_card_of_that_name(two_folders: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``other/h200_sxm_141gb.toml`` (4.7 TB/s) was audited as the registry's card: its 4.8 TB/s, its servings and
    locks, exit 0."""
    monkeypatch.chdir(two_folders)
    lines = bad("audit", "--fact", f"other/{H200}.toml:memory.bandwidth", root=two_folders)
    assert lines == [f"passprice: error: --fact other/{H200}.toml:memory.bandwidth: no such fact (other/{H200}.toml "
                     "is no card record of this registry: nothing here rests on it)"]


def test_record_name_decided_by_the_file(two_folders: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice.lineage import _record_name
    from passprice.registry import Root

    monkeypatch.chdir(two_folders)
    root = Root(two_folders)
    assert _record_name(root, "card", H200) == H200
    assert _record_name(root, "card", f"./facts/cards/{H200}.toml") == H200
    assert _record_name(root, "card", "other/H200_SXM_141GB.toml") == H200  # the same file
    assert _record_name(root, "card", f"other/{H200}.toml") == f"other/{H200}.toml"  # another file: no record's
    assert _record_name(root, "card", str(two_folders / "other" / f"{H200}.toml")) == str(
        two_folders / "other" / f"{H200}.toml")
    assert _record_name(root, "card", "nowhere/x.toml") == "nowhere/x.toml"


@pytest.mark.parametrize(
    ("ref", "entry"),
    [(H200, H200), (f"./{H200}", H200), (f"../cards/{H200}", H200), (f"facts/cards/{H200}.toml", H200),
     (f"./facts/cards/{H200}.toml", H200), (f"/elsewhere/{H200}.toml", f"/elsewhere/{H200}.toml"),
     (f"other/{H200}.toml", f"other/{H200}.toml"), (f"facts/cards/sub/{H200}.toml", f"facts/cards/sub/{H200}.toml"),
     ("../drafts/x", "../drafts/x")],
)
def test_review_matches_a_serving_s_card_by_its_file(ref: str, entry: str) -> None:
    """A review re-prices a serving when a file it names changed: ``/elsewhere/h200_sxm_141gb.toml`` was taken for
    the registry's card (its file name less ``.toml``)."""
    from passprice.unlocked import named_files

    data = (f'checkpoint = "llama3-8b-q4_k_m"\ncard = "{ref}"\n').encode()
    assert named_files(data) == {("checkpoint", "llama3-8b-q4_k_m"), ("card", entry)}
