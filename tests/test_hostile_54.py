"""Attack round 54 (issue 13): session 30's additions attacked on a freshly installed (non-editable) passprice —
``--json``'s one document, ``init .`` in an existing repository, ``fact set``'s floor index, ``-o`` through links,
``audit LOCK``'s digest lines and ``speculate``'s ``Routed`` refusal. Each test builds its reproducer and asserts the
exit status and the exact line; a comment says what it did before."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

LOCK = "locks/r1-qwen7b-h200.lock.toml"


def _error_of(result: object) -> str:
    """The one stderr line's problem, after checking the run: exit 2, one ``passprice: error:`` line on stderr, and
    stdout exactly the error document naming that problem."""
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    lines = result.stderr.splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("passprice: error: "), lines
    problem = lines[0].removeprefix("passprice: error: ")
    assert json.loads(result.stdout) == {"error": {"status": 2, "problems": [problem]}}  # type: ignore[attr-defined]
    return problem


# --- 1. --json then an option missing its value: no document ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("price", "--json", "--batch"), "Option '--batch' requires an argument."),
        (("price", "r1-qwen7b-h200", "--json", "--card"), "Option '--card' requires an argument."),
        (("sweep", "--json", "-o"), "Option '-o' requires an argument."),
        (("fact", "show", "--json", "--unit"),
         "No such option '--unit'. (--unit is an option of fact set, not of fact show) (see 'cli fact show --help')"),
    ],
    ids=["price-batch", "price-card", "sweep-o", "fact-show"],
)
def test_1_json_then_an_option_missing_its_value_prints_the_error_document(
    args: tuple[str, ...], problem: str
) -> None:
    # Before: exit 2 and the stderr line, but stdout empty: click's parser raises "requires an argument" with no
    # context, and the group's handler did not pass the command line's words that say --json was asked.
    assert _error_of(invoke(*args)) == problem


def test_1_an_option_missing_its_value_without_json_prints_nothing_on_stdout() -> None:
    result = invoke("price", "--batch")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "passprice: error: Option '--batch' requires an argument.\n"


# --- 2. init . through a link inside the repository's own .github ----------------------------------------------------


def _repository(tmp_path: Path) -> Path:
    fork = tmp_path / "fork"
    (fork / ".github").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(fork)], check=True)
    (fork / "README.md").write_text("# our fork\n", encoding="utf-8")
    return fork


def test_2_init_refuses_to_write_the_workflow_through_a_linked_workflows_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: exit 0, "kept": [], and .github/workflows/facts.yml written into the folder outside the repository the
    # link names.
    fork = _repository(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (fork / ".github" / "workflows").symlink_to(outside)
    monkeypatch.chdir(fork)
    result = invoke("init", ".", "--json")
    assert _error_of(result) == (
        f".github/workflows: is a symbolic link to {outside}; init adds .github/workflows/facts.yml to the "
        "repository's own folders only, never through a link: make it a folder of its own, or move it aside "
        "(mv .github/workflows .github/workflows.mine), and run init again"
    )
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in fork.iterdir()) == [".git", ".github", "README.md"]  # nothing half-written
    assert not [p for p in tmp_path.iterdir() if p.name not in ("fork", "outside")]  # no staging folder left


def test_2_init_names_a_dangling_workflows_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: exit 2, ".: cannot write: File exists" (mkdir of the link), naming neither the link nor the file.
    fork = _repository(tmp_path)
    (fork / ".github" / "workflows").symlink_to(tmp_path / "gone")
    monkeypatch.chdir(fork)
    result = invoke("init", ".")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        f"passprice: error: .github/workflows: is a symbolic link to {tmp_path / 'gone'}; init adds "
        ".github/workflows/facts.yml to the repository's own folders only, never through a link: make it a folder of "
        "its own, or move it aside (mv .github/workflows .github/workflows.mine), and run init again\n"
    )
    assert sorted(p.name for p in fork.iterdir()) == [".git", ".github", "README.md"]


def test_2_init_names_a_workflows_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: exit 2, ".: cannot write: Not a directory".
    fork = _repository(tmp_path)
    (fork / ".github" / "workflows").write_text("not a folder\n", encoding="utf-8")
    (fork / ".github" / "workflows.mine").mkdir()  # the advice names a free name
    monkeypatch.chdir(fork)
    result = invoke("init", ".")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        "passprice: error: .github/workflows: is a regular file, not a folder; init adds .github/workflows/facts.yml "
        "into it: move it aside (mv .github/workflows .github/workflows.mine2), and run init again\n"
    )
    assert (fork / ".github" / "workflows").read_text(encoding="utf-8") == "not a folder\n"
    assert sorted(p.name for p in fork.iterdir()) == [".git", ".github", "README.md"]


def test_2_init_still_keeps_a_linked_workflow_file_of_its_own(tmp_path: Path) -> None:
    # a link AS the file (to nothing): the repository's own, left alone, as before
    fork = _repository(tmp_path)
    (fork / ".github" / "workflows").mkdir()
    (fork / ".github" / "workflows" / "facts.yml").symlink_to(tmp_path / "gone.yml")
    result = invoke("init", str(fork), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["kept"] == [".github/workflows/facts.yml", "README.md"]
    assert not (tmp_path / "gone.yml").exists()


# --- 3. audit LOCK's "passprice reproduce" advice: a file name pasted bare -------------------------------------------


CITE = ("              to cite this price: the lock's name and digest, which cover every pinned fact, the checkpoint's "
        "content, the serving, the pricing model and the recorded price; `passprice reproduce {}` re-prices it from "
        "them bit for bit")


@pytest.mark.parametrize(
    ("name", "word"),
    [
        ("a$(id)'x.lock.toml", "'a$(id)'\"'\"'x.lock.toml'"),
        ("a\nb.lock.toml", "$'a\\x0ab.lock.toml'"),
        ("two words.lock.toml", "'two words.lock.toml'"),
    ],
    ids=["command-substitution", "newline", "space"],
)
def test_3_the_reproduce_advice_quotes_the_lock_file_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, word: str
) -> None:
    # Before: `passprice reproduce a$(id)'x.lock.toml` (pasting it ran `id`), and the newline split the line in two.
    shutil.copyfile(REPO / LOCK, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    result = invoke("audit", name)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("lock          r1-qwen7b-h200: digest "))
    assert lines[at + 1] == CITE.format(word)


def test_3_a_plain_name_is_written_as_given() -> None:
    result = invoke("audit", LOCK)
    assert result.exit_code == 0, result.output
    assert CITE.format(LOCK) in result.stdout.splitlines()


# --- 4. speculate's Routed refusal under 300 routing records: a 9,844-character line ---------------------------------


def test_4_a_routed_refusal_names_five_records_and_counts_the_rest(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    uniform = (root / "facts" / "routing" / "uniform.toml").read_bytes()
    for i in range(1, 13):
        (root / "facts" / "routing" / f"u{i:02d}.toml").write_bytes(uniform)
    # DeepSeek-V3's 403.5 GB fit no registered card, and weights no routing makes fit are refused NotResident before
    # Routed (walk48): this copy's MI300X holds 960 GB, so the refusal is Routed's.
    card = root / "facts" / "cards" / "mi300x.toml"
    card.write_text(card.read_text(encoding="utf-8").replace("value = 192\n", "value = 960\n", 1), encoding="utf-8")
    args = ("speculate", "--checkpoint", "deepseek-v3-q4_k_m", "--card", "mi300x", "--draft", "deepseek-v3-mtp",
            "--tokens", "1")
    # Before: every one of the 13 records on the line (300 records: 9,844 characters on one line).
    result = invoke(*args, root=root)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.endswith(
        "; registered here for 256 experts, 8 a token: u01 (assumed; any checkpoint), u02 (assumed; any "
        "checkpoint), u03 "
        "(assumed; any checkpoint), u04 (assumed; any checkpoint), u05 (assumed; any checkpoint), and 8 more (--json "
        "lists every one)\n"
    )
    assert result.stderr.count("\n") == 1
    data = json.loads(invoke(*args, "--json", root=root).stdout)
    assert len(data["records"]) == 13 and data["records"][-1] == "uniform (assumed; any checkpoint)"


# --- 5. fact set's floor index: a lock rewritten while it was read poisoned the cache -------------------------------


SET = ("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "4.8", "--unit", "TB/s", "--provenance",
       "estimated", "--source", "nvidia-h200-datasheet", "--locator", "xyz table")


def test_5_a_lock_rewritten_while_the_floor_index_reads_it_is_not_cached_under_its_old_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passprice import locks

    root = copy_root(tmp_path)
    lock = root / LOCK
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    old, card_text = lock.read_bytes(), card.read_bytes()
    new = old.replace(b'"memory.bandwidth" = "published"', b'"memory.bandwidth" = "estimated"')
    assert len(new) == len(old) and new != old  # same size: only the bytes tell them apart
    read = locks._floors_of

    def racing(file: Path, folder: Path | None) -> list[object] | None:
        if file.name == lock.name and file.read_bytes() == old:
            file.write_bytes(new)  # the floor loosened between the index's read of the bytes and the lock's parse
        return read(file, folder)

    monkeypatch.setattr(locks, "_floors_of", racing)
    first = invoke(*SET, root=root)
    assert first.exit_code == 0, first.output
    card.write_bytes(card_text)
    lock.write_bytes(old)  # the floor back at published: the edit must be warned of again
    monkeypatch.setattr(locks, "_floors_of", read)
    # Before: no line for r1-qwen7b-h200, its floors (estimated) served from the cache under the published bytes.
    second = invoke(*SET, root=root)
    assert second.exit_code == 0, second.output
    assert [line for line in second.stderr.splitlines() if "of lock r1-qwen7b-h200:" in line] == [
        "passprice: warning: facts/cards/h200_sxm_141gb.toml: memory.bandwidth is estimated now, below the floor "
        "published of lock r1-qwen7b-h200: `passprice check` (the pre-commit hook) and the review fail it; restore "
        "the fact, or loosen that floor on purpose (`passprice lock --update -o locks/r1-qwen7b-h200.lock.toml "
        "--force --require memory.bandwidth=estimated`)"]


# --- 6. --json given to passprice itself (or to the fact group): "Did you mean '--version'?" ------------------------


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("--json", "cards"), "passprice: error: --json is an option of each command, not of passprice itself: give "
                              "it after the command (passprice COMMAND … --json) (see 'cli --help')"),
        (("fact", "--json", "show", "h200_sxm_141gb", "memory.bandwidth"),
         "passprice: error: --json is an option of each command, not of passprice fact itself: give it after the "
         "command (passprice fact COMMAND … --json) (see 'cli fact --help')"),
    ],
    ids=["passprice", "fact"],
)
def test_6_json_before_the_command_says_where_it_goes(args: tuple[str, ...], line: str) -> None:
    # Before: "No such option '--json'. Did you mean '--version'? (see 'passprice --help')", and for fact "No such
    # option '--json'."; --json counts after the command's name only (DESIGN), so stdout stays empty, as before.
    result = invoke(*args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == line + "\n"


def test_2_init_names_the_read_only_folder_of_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before (as a user, .github mode 555): exit 2, ".: cannot write: the folder . is not writable (Permission
    # denied)", naming the writable folder. os.access is stood in for: as root every folder is writable.
    import os

    from passprice import scaffold

    fork = _repository(tmp_path)
    access = os.access
    monkeypatch.setattr(scaffold.os, "access", lambda p, mode: str(p) != ".github" and access(p, mode))
    monkeypatch.chdir(fork)
    result = invoke("init", ".", "--json")
    assert _error_of(result) == (
        ".: cannot write: the folder .github is not writable; init adds .github/workflows/facts.yml there: make it "
        "writable, or move it aside, and run init again"
    )
    assert sorted(p.name for p in fork.iterdir()) == [".git", ".github", "README.md"]


# --- 7. a usage error's line was not cut: 100,000 characters of option name printed a 100,070-character line ---------


def test_7_a_long_unknown_option_is_cut_on_stderr_and_whole_in_the_document() -> None:
    option = "--" + "z" * 5000
    message = f"No such option '{option}'."
    result = invoke("price", "r1-qwen7b-h200", "--json", option)
    assert result.exit_code == 2
    # Before: the whole 5,032-character message on the line (100,070 characters for a 100,000-character option).
    assert result.stderr == (f"passprice: error: {message[:3000]} … ({len(message) - 3500:,} characters left out) … "
                             f"{message[-500:]} (see 'cli price --help')\n")
    assert json.loads(result.stdout) == {"error": {"status": 2, "problems": [f"{message} (see 'cli price --help')"]}}
