"""Attack round 8 (issue 13): the one-line rule's bidi marks, the names a lock carries, a ``--plot`` that cannot be
written after ``-o``, and the code of this session's lead changes (locking, audit targets, history of merged
branches, synth's Mixtral, the checkout's pricing model). Each test builds the input that broke the landed main and
asserts what passprice now does with it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke

# --- the one-line rule: the bidi marks U+061C, U+200E, U+200F -----------------------------------------------------


@pytest.mark.parametrize(("mark", "shown"), [("\u061c", "\\u061c"), ("\u200e", "\\u200e"), ("\u200f", "\\u200f")])
def test_a_bidi_mark_in_a_locator_is_refused(tmp_path: Path, mark: str, shown: str) -> None:
    """The one-line rule refused the bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) but not
    the marks (U+061C ARABIC LETTER MARK, U+200E LEFT-TO-RIGHT MARK, U+200F RIGHT-TO-LEFT MARK): ``fact set
    --locator`` with one wrote it (exit 0), and it reordered the text around it wherever it was shown."""
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = card.read_bytes()
    bad("fact", "set", "h200_sxm_141gb", "streams.rewrite", "--value", "0.8", "--unit", "1", "--provenance",
        "estimated", "--source", "azure-ai-benchmarking-guide", "--locator", f"a{mark}b", root=root,
        says=f"streams.rewrite.locator: 'a{shown}b' holds a control character")
    assert card.read_bytes() == before


# --- the names a lock carries: one line ----------------------------------------------------------------------------

_NAME = "r1\x1b[31m\u202ex"


def _forged(root: Path, change: str) -> Path:
    """The registry's r1-qwen7b-h200 lock, re-digested as an attacker who knows the digest rule would write it, with
    the name-like text ``change`` names set to :data:`_NAME`."""
    import attrs

    from passprice.locks import lock_text, read_lock

    lock = read_lock(root / "locks" / "r1-qwen7b-h200.lock.toml")
    if change == "lock.name":
        lock = attrs.evolve(lock, info=attrs.evolve(lock.info, name=_NAME))
    elif change == "lock.serving":
        lock = attrs.evolve(lock, info=attrs.evolve(lock.info, serving=_NAME))
    elif change == "checkpoint.name":
        lock = attrs.evolve(lock, checkpoint_pin=attrs.evolve(lock.checkpoint_pin, name=_NAME))
    elif change == "serving.card":
        lock = attrs.evolve(lock, serving=attrs.evolve(lock.serving, card=_NAME))
    forged = root / "forged.lock.toml"
    forged.write_text(lock_text(lock), encoding="utf-8")
    return forged


@pytest.mark.parametrize("change", ["lock.name", "lock.serving", "checkpoint.name", "serving.card"])
@pytest.mark.parametrize("command", ["check", "price", "audit", "reproduce"])
def test_a_lock_name_holding_a_control_character_is_refused(tmp_path: Path, change: str, command: str) -> None:
    """A lock's name (and the serving, checkpoint and card names it carries) had no one-line rule: a lock re-digested
    with ``lock.name = "r1\\x1b[31m\\u202ex"`` passed ``check``, ``audit``, ``reproduce`` and ``price`` and was
    printed raw, colouring and reordering the terminal's line."""
    root = copy_root(tmp_path)
    forged = _forged(root, change)
    says = f"forged.lock.toml: {change}: 'r1\\x1b[31m\\u202ex' holds a control character"
    if command in ("audit", "reproduce"):
        bad(command, str(forged), root=root, says=says)
        return
    if command == "price" and change == "lock.serving":
        return  # a lock of another serving is not read by price r1-qwen7b-h200 (check reads it)
    forged.rename(root / "locks" / forged.name)
    result = invoke(*(("check",) if command == "check" else ("price", "r1-qwen7b-h200")), root=root)
    assert result.exit_code == 2, result.output
    assert f"passprice: error: locks/{says}" in result.stderr.splitlines() or any(
        line.startswith("passprice: error: ") and says in line for line in result.stderr.splitlines()
    ), result.stderr


# --- -o and --plot: a picture that cannot be written leaves no -o file -----------------------------------------------


def test_a_plot_that_cannot_be_written_leaves_no_sweep_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``sweep -o x.csv --plot ro/x.png`` wrote the whole CSV, then failed on the picture (exit 2), leaving x.csv:
    the picture was written after -o was put in place. It is now written before -o's rename, so a write that fails
    however it fails (here as a read-only file system fails it, which no check before the run can always foresee)
    leaves neither file."""
    pytest.importorskip("matplotlib")
    from passprice import plots
    from passprice.errors import InputError

    def refuse(path: Path, data: bytes, force: bool = False) -> None:
        raise InputError(f"{path}: cannot write: Read-only file system")

    monkeypatch.setattr(plots, "write_picture", refuse)
    out, picture = tmp_path / "x.csv", tmp_path / "x.png"
    bad("sweep", "r1-qwen7b-h200", "--batches", "1,2", "-o", str(out), "--plot", str(picture),
        says=f"{picture}: cannot write: Read-only file system")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
@pytest.mark.parametrize("command", [("sweep", "r1-qwen7b-h200", "--batches", "1,2"),
                                     ("simulate", "r1-qwen7b-h200", "--synthetic", "20")])
def test_a_plot_into_a_read_only_folder_is_refused_before_anything_is_written(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """A ``--plot`` path in a read-only folder is refused before the run, naming the folder; no -o file is written."""
    pytest.importorskip("matplotlib")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    out = tmp_path / "x.out"
    try:
        bad(*command, "-o", str(out), "--plot", str(folder / "x.png"),
            says=f"{folder / 'x.png'}: cannot write: the folder {folder} is not writable")
    finally:
        folder.chmod(0o755)
    assert not out.exists() and list(folder.iterdir()) == []


# --- pins.checkout_model: a root's src/passprice that is not plain module files ------------------------------------


def _checkout(tmp_path: Path, **modules: str) -> Path:
    """A root holding ``src/passprice`` with ``pins.py`` and ``modules`` (name → text)."""
    package = tmp_path / "src" / "passprice"
    package.mkdir(parents=True)
    (package / "pins.py").write_text("LOCK_FORMAT = 2\n", encoding="utf-8")
    for name, text in modules.items():
        (package / f"{name}.py").write_text(text, encoding="utf-8")
    return tmp_path


def test_a_checkout_module_that_is_a_fifo_does_not_block(tmp_path: Path) -> None:
    """A root whose ``src/passprice`` held a FIFO named ``*.py`` blocked ``check``, ``lock`` and ``reproduce``
    forever (the module files were read with ``read_bytes``); it is now code that cannot be read (round 18: not
    "no checkout", which let a lock into it through), said without blocking."""
    import subprocess
    import sys

    root = _checkout(tmp_path, locks="X = 1\n")
    os.mkfifo(root / "src" / "passprice" / "zz.py")
    code = "import sys; from pathlib import Path; from passprice.pins import checkout_model; " \
        "print(checkout_model(Path(sys.argv[1])))"
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=60, env=env)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.startswith(
        f"('not read: {root / 'src' / 'passprice' / 'zz.py'}: is a FIFO (named pipe), not a regular file"
    ), done.stdout


@pytest.mark.parametrize("nesting", ["-" * 200_000 + "1", "[" * 90 + "]" * 90 + "\ny = " + "+".join("a" * 100_000)])
def test_a_checkout_module_nested_past_the_parser_is_no_traceback(tmp_path: Path, nesting: str) -> None:
    """A module nested deeper than the parser goes raised ``MemoryError`` or ``RecursionError`` out of ``check``
    (a traceback, exit 1): such a checkout is one whose code does not parse (round 18: said so, not taken for no
    checkout)."""
    from passprice import pins

    root = _checkout(copy_root(tmp_path), locks=f"x = {nesting}\n")
    said = pins.checkout_model(root)
    assert said is not None and said[0] == "not read: src/passprice/locks.py: nested deeper than the parser goes"
    result = invoke("check", root=root)
    assert result.exit_code == 0 and "all holds" in result.stdout, result.output


def test_a_checkout_module_over_the_size_bound_is_not_read(tmp_path: Path) -> None:
    """A module file past :data:`passprice.pins.MODULE_BYTES` (here a sparse 4 MiB + 1) is refused unread."""
    from passprice import pins

    root = _checkout(tmp_path, locks="X = 1\n")
    with open(root / "src" / "passprice" / "serving.py", "wb") as f:
        f.truncate(pins.MODULE_BYTES + 1)
    said = pins.checkout_model(root)
    assert said is not None and said[0].startswith(f"not read: {root / 'src' / 'passprice' / 'serving.py'}: ")


@pytest.mark.parametrize("shape", ["file", "loop", "pins-loop"])
def test_a_checkout_package_that_is_a_file_or_a_link_loop_is_no_checkout(tmp_path: Path, shape: str) -> None:
    """``src/passprice`` a link loop, or its ``pins.py`` one, stopped ``check`` with 'a loop of symbolic links'
    (exit 2) for a folder check does not read."""
    from passprice import pins

    src = tmp_path / "src"
    src.mkdir()
    if shape == "file":
        (src / "passprice").write_text("x\n", encoding="utf-8")
    elif shape == "loop":
        (src / "passprice").symlink_to("passprice")
    else:
        (src / "passprice").mkdir()
        (src / "passprice" / "pins.py").symlink_to("pins.py")
    assert pins.checkout_model(tmp_path) is None


# --- fact show --history: the versions of merged branches ----------------------------------------------------------


def _merged_history(root: Path) -> list[tuple[str, object, list[str], bool]]:
    import json

    from tests.test_history import CARD

    result = invoke("fact", "show", CARD, "memory.bandwidth", "--history", "--json", root=root)
    assert result.exit_code == 0, result.output
    return [(v["subject"], v["fact"]["value"] if v["fact"] else None, v["changed"], v["merged_by"] is not None)
            for v in json.loads(result.stdout)["versions"]]


def _side_file(root: Path, name: str) -> None:
    from tests.test_history import git

    (root / f"{name}.txt").write_text(name, encoding="utf-8")
    git(root, "add", f"{name}.txt")
    git(root, "commit", "-qm", f"{name}: another file")


def test_the_versions_on_an_octopus_merges_third_branch_are_shown(tmp_path: Path) -> None:
    """Only a merge's second parent was walked: a measured figure replaced by an estimate on the third branch of an
    octopus merge showed as one new estimate at the merge."""
    from tests.test_history import CARD_FILE, git, registry, set_bandwidth

    root = registry(tmp_path)
    git(root, "branch", "-M", "main")
    for name in ("b1", "b2"):
        git(root, "checkout", "-qb", name, "main")
        _side_file(root, name)
    git(root, "checkout", "-qb", "b3", "main")
    set_bandwidth(root / CARD_FILE, "4.0")
    git(root, "commit", "-qam", "b3: measured")
    set_bandwidth(root / CARD_FILE, "4.5")
    git(root, "commit", "-qam", "b3: estimated")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "octopus", "b1", "b2", "b3")
    assert _merged_history(root) == [
        ("octopus", 4.5, ["value"], False),
        ("b3: estimated", 4.5, ["value"], True),
        ("b3: measured", 4.0, ["value"], True),
        ("the registry", 4.8, ["new"], False),
    ]


def test_the_versions_before_a_rename_on_a_branch_are_shown(tmp_path: Path) -> None:
    """A branch that changed the fact, then renamed the card's file: its versions were looked up under the new name
    only, and the measured step showed as one change at the rename."""
    from tests.test_history import CARD_FILE, git, registry, set_bandwidth

    root = registry(tmp_path)
    git(root, "branch", "-M", "main")
    git(root, "checkout", "-qb", "side")
    set_bandwidth(root / CARD_FILE, "4.0")
    git(root, "commit", "-qam", "side: measured")
    set_bandwidth(root / CARD_FILE, "4.5")
    git(root, "commit", "-qam", "side: estimated")
    git(root, "mv", CARD_FILE, "facts/cards/h200_renamed.toml")
    git(root, "commit", "-qm", "side: renamed")
    git(root, "checkout", "-q", "main")
    _side_file(root, "main")
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    import json

    result = invoke("fact", "show", "h200_renamed", "memory.bandwidth", "--history", "--json", root=root)
    assert result.exit_code == 0, result.output
    assert [(v["subject"], v["fact"]["value"], v["merged_by"] is not None)
            for v in json.loads(result.stdout)["versions"]] == [
        ("merge side", 4.5, False), ("side: estimated", 4.5, True), ("side: measured", 4.0, True),
        ("the registry", 4.8, False),
    ]


def test_a_branch_that_removed_the_card_shows_the_removal(tmp_path: Path) -> None:
    """A branch that deleted the card's file and restored it with another figure: the deletion was left out (only
    commits whose content read were versions), so the figure seemed edited in place."""
    from tests.test_history import CARD_FILE, git, registry, set_bandwidth

    root = registry(tmp_path)
    git(root, "branch", "-M", "main")
    git(root, "checkout", "-qb", "side")
    git(root, "rm", "-q", CARD_FILE)
    git(root, "commit", "-qm", "side: removed")
    git(root, "checkout", "-q", "HEAD~1", "--", CARD_FILE)
    set_bandwidth(root / CARD_FILE, "4.0")
    git(root, "add", CARD_FILE)
    git(root, "commit", "-qm", "side: restored")
    git(root, "checkout", "-q", "main")
    _side_file(root, "main")
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    assert _merged_history(root) == [
        ("merge side", 4.0, ["value"], False),
        ("side: restored", 4.0, ["new"], True),
        ("side: removed", None, ["removed"], True),
        ("the registry", 4.8, ["new"], False),
    ]


# --- synth: Mixtral configurations a llama header cannot carry -----------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"moe_intermediate_size": 1024}, "config: moe_intermediate_size 1024: a mixtral mixture's experts are "
         "intermediate_size (14336) wide in llama.cpp"),
        ({"model_type": "llama", "moe_intermediate_size": 1024}, "config: moe_intermediate_size 1024: a llama "
         "mixture's experts are intermediate_size (14336) wide"),
        ({"shared_expert_intermediate_size": 4096}, "config: shared_expert_intermediate_size 4096: a mixtral mixture "
         "has no shared expert in llama.cpp"),
        ({"n_shared_experts": 1}, "config: n_shared_experts 1: a mixtral mixture has no shared expert"),
        ({"num_experts": 4}, "config: num_experts 4 and num_local_experts 8 disagree: give the routed experts once"),
        # Round 8 left it: leading dense blocks were ignored, every block built routed.
        ({"first_k_dense_replace": 1}, "config: first_k_dense_replace 1: a mixtral mixture routes every block"),
    ],
    ids=["expert-width", "llama-expert-width", "shared-width", "shared-count", "two-counts", "dense-blocks"],
)
def test_a_mixtral_configuration_a_llama_header_cannot_carry_is_refused(
    tmp_path: Path, changes: dict[str, object], says: str
) -> None:
    """synth built each of these (exit 0): experts 1,024 wide in tensors under a header whose only width is
    feed_forward_length 14,336 (a header llama.cpp's llama loader refuses: it sizes experts by n_ff; priced at 2.82 GB
    of weights a pass against 25.64 GB); a shared expert declared and left out (priced as the plain 8x7B); and
    ``num_experts`` 4 beside ``num_local_experts`` 8, built with 4 (half the weights) without a word."""
    import json

    from cli_helpers import REPO

    document = json.loads((REPO / "examples" / "configs" / "mixtral-8x7b.json").read_text(encoding="utf-8"))
    document["config"].update(changes)
    config = tmp_path / "mixtral.json"
    config.write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "m.gguf"
    bad("synth", str(config), "-o", str(out), says=f"mixtral.json: {says}")
    assert not out.exists()


# --- lock: a name taken from a file name ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stem", "shown"), [("a\nb", "a\\nb"), ("r1\x1b[31m", "r1\\x1b[31m"), ("x\u202ey", "x\\u202ey")]
)
def test_a_lock_named_after_a_file_name_that_is_no_lock_name_is_refused(tmp_path: Path, stem: str, shown: str) -> None:
    """``lock SERVING -o $'a\\nb.lock.toml'`` named the lock after its file: "a", newline, "b", printed on two lines
    ('locked a' / 'b (price …'), and a lock the one-line rule does not read back. ``--name`` was held to the lock
    name rule; a name taken from a file name now is too, before anything is priced or written."""
    root = copy_root(tmp_path)
    out = tmp_path / f"{stem}.lock.toml"
    bad("lock", "r1-qwen7b-h200", "-o", str(out), root=root,
        says=f"{shown}.lock.toml: the lock would be named '{shown}' after it, which holds a line break, a control "
        "character, a bidi control or an invisible character: give --name")
    assert not out.exists()
    # A printable name that is not ASCII names a lock as before (test_bad_input_4/5: é.lock.toml names a lock é).


def test_update_with_another_serving_is_refused(tmp_path: Path) -> None:
    """``lock qwen3-30b-a3b-h200 --update -o locks/r1-qwen7b-h200.lock.toml`` re-locked the r1 lock's file for the
    qwen3 serving (exit 0), keeping the name r1-qwen7b-h200 and r1's floors: the r1 serving was left with no lock,
    and nothing said so. ``--update`` re-locks the serving the lock locks."""
    root = copy_root(tmp_path)
    file = root / "locks" / "r1-qwen7b-h200.lock.toml"
    before = file.read_bytes()
    bad("lock", "qwen3-30b-a3b-h200", "--update", "-o", str(file), root=root,
        says="r1-qwen7b-h200.lock.toml: locks serving r1-qwen7b-h200, not qwen3-30b-a3b-h200: --update re-locks "
        "the serving a lock locks")
    assert file.read_bytes() == before


# --- sweep --lock L: the servings L does not lock keep their own locks -----------------------------------------------


def test_sweep_with_a_lock_of_one_serving_keeps_the_others_locks(tmp_path: Path) -> None:
    """``sweep A B --lock LOCK_OF_A`` swept B under no lock at all: with the H100's bandwidth made an estimate,
    below the published floor gemma3-270m-h100's lock sets, ``sweep gemma3-270m-h100 r1-qwen7b-h200 --lock
    r1-qwen7b-h200`` priced it (exit 0), where ``sweep gemma3-270m-h100`` is refused LockFloor: naming another
    serving's lock slipped past this one's."""
    root = copy_root(tmp_path)
    result = invoke("fact", "set", "h100_sxm5_80gb", "memory.bandwidth", "--value", "3.0", "--unit", "TB/s",
                    "--provenance", "estimated", "--source", "nvidia-h100-datasheet", "--locator",
                    "engineering estimate for this test", root=root)
    assert result.exit_code == 0, result.output
    result = invoke("sweep", "gemma3-270m-h100", "r1-qwen7b-h200", "--batches", "1", "--lock", "r1-qwen7b-h200",
                    root=root)
    assert (result.exit_code, result.stdout) == (1, ""), result.output
    assert result.stderr.splitlines()[-1].startswith(
        "passprice: refused: LockFloor: lock gemma3-270m-h100 refuses this price: memory.bandwidth is estimated, "
        "below the floor published"
    )


def test_a_lock_not_found_lists_lock_files_only(tmp_path: Path) -> None:
    """Round 8: the 'locks:' list of a lock not found named a folder and a FIFO called NAME.lock.toml too."""
    root = copy_root(tmp_path)
    (root / "locks" / "afolder.lock.toml").mkdir()
    os.mkfifo(root / "locks" / "afifo.lock.toml")
    lines = bad("reproduce", "nope", root=root, says="lock 'nope': no such file")
    assert "afolder" not in lines[0] and "afifo" not in lines[0] and "r1-qwen7b-h200-best" in lines[0]
