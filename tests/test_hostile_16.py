"""Attack round 16 (issue 13) on this session's code (the TPOT cap, serving stacks and calibrate, audit's sources,
editor lock files, the diff's rename rule, reproduce, the result memo and its cache folder) and three leftovers of
round 15: each test builds the input that broke it and asserts what passprice now does with it (exit status and the
error line)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke, refused

LMDEPLOY = "registry/measurements/lmdeploy-turbomind-a100.toml"
REPO_DRAFT = REPO / "facts" / "drafts" / "qwen35-mtp.toml"

# --- (a) a measured tokens/s too small to be a measurement ---------------------------------------------------------


def test_a_measured_tokens_per_s_of_1e_300_is_bad_input(tmp_path: Path) -> None:
    """A run measured at 1e-300 tokens/s was schema-valid (> 0): validate printed its miss as a 300-digit
    percentage (exit 0) and check called three stack facts stale. The schema floors a measured tokens/s at 0.01 (one
    token in 100 s): one line naming the file and the run's key."""
    root = copy_root(tmp_path)
    path = root / LMDEPLOY
    text = path.read_text(encoding="utf-8")
    assert text.count("tokens_per_s = 100.02\n") == 1
    path.write_text(text.replace("tokens_per_s = 100.02\n", "tokens_per_s = 1e-300\n"), encoding="utf-8")
    # named relative to the registry by calibrate, validate and check alike (leftovers 28c, 28d: ROOT/registry/…)
    line = f"{LMDEPLOY}: run.0.tokens_per_s: 1e-300 is less than the minimum of 0.01"
    assert bad("calibrate", "--stack", "lmdeploy-turbomind-2312", "--dry-run", root=root, says=line) == [
        f"passprice: error: {line}"
    ]
    validated = invoke("validate", root=root)  # the other files' runs still shown, no 300-digit percentage
    # named as check names it, relative to the registry (leftovers 28c)
    assert validated.exit_code == 2 and validated.stderr == f"passprice: error: {line}\n"
    assert "xd3.rtx_3080.8b-q4km.tg512 " in validated.stdout and "lmd1." not in validated.stdout
    checked = invoke("check", root=root)
    assert checked.exit_code == 2
    assert checked.stderr == f"passprice: error: {line}\n"


# --- (b) a serving naming its card by a path relative to the working folder ----------------------------------------


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)  # fmt: skip


@pytest.mark.parametrize(
    "ref", ["facts/cards/h100_sxm5_80gb.toml", "h100_sxm5_80gb.toml", "./facts/cards/h100_sxm5_80gb.toml"]
)
def test_a_serving_naming_its_card_by_a_relative_path_fails_check_as_it_fails_diff(
    tmp_path: Path, ref: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``card = "facts/cards/h100_sxm5_80gb.toml"`` was looked up from the working folder: check run from the root
    said "all holds", but diff of the commit said "lies outside the registry (/tmp/passprice-diff-…)" (exit 2), since
    the revision's snapshot is another folder. Both refuse it now with one line saying how to name the card."""
    root = copy_root(tmp_path)
    monkeypatch.chdir(root)
    serving = root / "registry" / "servings" / "gemma3-270m-h100.toml"
    text = serving.read_text(encoding="utf-8")
    _git(root, "init", "-q", ".")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    serving.write_text(text.replace('card = "h100_sxm5_80gb"', f'card = "{ref}"'), encoding="utf-8")
    why = (
        f"card: '{ref}' is a path relative to the working folder, which a registry file read from another folder (or "
        "by diff, from another revision) does not find: give its registry name (`passprice import FILE --name NAME` "
        "for a checkpoint, a card's file into facts/cards/)"
    )
    checked = invoke("check", root=root)
    assert checked.exit_code == 2
    assert checked.stderr == f"passprice: error: registry/servings/gemma3-270m-h100.toml: {why}\n"
    bad("price", "gemma3-270m-h100", root=root, says=f"registry/servings/gemma3-270m-h100.toml: {why}")  # left29b
    _git(root, "commit", "-qam", "relative")
    diffed = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert diffed.exit_code == 2
    last = diffed.stderr.splitlines()[-1]
    assert last == f"passprice: error: on HEAD: registry/servings/gemma3-270m-h100.toml: {why}"


# --- (c) a card renamed under a lock ---------------------------------------------------------------------------------


def test_check_fails_a_lock_whose_serving_names_a_renamed_card_as_price_refuses_it(tmp_path: Path) -> None:
    """``git mv facts/cards/h100_sxm5_80gb.toml facts/cards/h100_sxm.toml`` with its servings renamed to match: price
    refused ``ServingChanged`` (the lock locks the card by its old name), but check said "all holds" (exit 0). Check
    fails the lock with the refusal's own text."""
    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    (cards / "h100_sxm5_80gb.toml").rename(cards / "h100_sxm.toml")
    for serving in (root / "registry" / "servings").glob("*.toml"):
        text = serving.read_text(encoding="utf-8")
        serving.write_text(text.replace('card = "h100_sxm5_80gb"', 'card = "h100_sxm"'), encoding="utf-8")
    priced = invoke("price", "gemma3-270m-h100", "--json", root=root)
    assert priced.exit_code == 1 and json.loads(priced.stdout)["refusal"] == "ServingChanged"
    checked = invoke("check", "--json", root=root)
    assert checked.exit_code == 1, checked.output
    locks = {lock["name"]: lock for lock in json.loads(checked.stdout)["locks"]}
    failing = sorted(name for name, lock in locks.items() if not lock["holds"])
    assert failing == ["gemma3-270m-h100", "gpt-oss-120b-h100", "qwen35-27b-h100-every8"]
    assert locks["gemma3-270m-h100"]["refusal"] == "ServingChanged"
    text = invoke("check", root=root).stdout
    assert (
        "  floors: today's inputs refuse the price: lock gemma3-270m-h100 locks serving gemma3-270m-h100 on card "
        "h100_sxm5_80gb, and the serving now names card h100_sxm: the serving changed since the lock"
    ) in text
    assert "all holds" not in text


# --- a registry file that is a symbolic link to nothing --------------------------------------------------------------


@pytest.mark.parametrize(
    ("folder", "name", "command"),
    [
        ("facts/cards", "h200_sxm_141gb", ("facts", "h200_sxm_141gb")),
        ("facts/stacks", "llamacpp-cuda-2405", ("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405")),
        ("sources", "nvidia-h200-datasheet", ("audit", "locks/r1-qwen7b-h200.lock.toml")),
    ],
)
def test_a_registry_file_linking_to_nothing_is_named_as_such(
    tmp_path: Path, folder: str, name: str, command: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``facts/cards/h200_sxm_141gb.toml`` a symbolic link to a file that is gone: every lookup said "card
    'h200_sxm_141gb': not found …; did you mean h200_sxm_141gb or …?" (the name is listed as registered, so the
    advice named the very name asked for). The line names the link and where it points."""
    root = copy_root(tmp_path)
    monkeypatch.chdir(root)
    path = root / folder / f"{name}.toml"
    path.unlink()
    path.symlink_to(tmp_path / "gone.toml")
    kind = {"facts/cards": "card", "facts/stacks": "stack", "sources": "source"}[folder]
    why = (
        f"a symbolic link to {tmp_path / 'gone.toml'}, which names no file (restore the {kind} file it links to, or "
        "remove the link)"
    )
    lines = bad(*command, root=root, says=f"{path}: {why}")
    assert len(lines) == 1 and "did you mean" not in lines[0]


# --- the diff's rename rule: a renamed serving naming its card by the path to it ------------------------------------


def test_a_serving_renamed_with_its_card_named_by_path_is_refused_before_it_can_drop_floors(tmp_path: Path) -> None:
    """A pull request removing serving r1-qwen7b-mi300x-int8kv and its lock, and adding r1-mi (the same serving, its
    card given as the absolute path to facts/cards/mi300x.toml) locked at ``--floor assumed``: diff said "no floor
    dropped, serving r1-qwen7b-mi300x-int8kv is deleted with it" (exit 0). A registry's serving file now names its
    records by name alone (an absolute path is one clone's file: ``check`` passed it where ``diff`` of revisions
    refused it): the lock is refused, and the review reads HEAD's serving file as bad input (exit 2)."""
    base = copy_root(tmp_path / "base")
    head = copy_root(tmp_path / "head")
    old = head / "registry" / "servings" / "r1-qwen7b-mi300x-int8kv.toml"
    card = head / "facts" / ".." / "facts" / "cards" / "mi300x.toml"
    serving = head / "registry" / "servings" / "r1-mi.toml"
    serving.write_text(old.read_text(encoding="utf-8").replace('card = "mi300x"', f'card = "{card}"'), encoding="utf-8")
    old.unlink()
    (head / "locks" / "r1-qwen7b-mi300x-int8kv.lock.toml").unlink()
    out = head / "locks" / "r1-mi.lock.toml"
    absolute = (f"registry/servings/r1-mi.toml: card: '{card}' is an absolute path, the file of one clone on one "
                "machine (another "
                "checkout, and each side of a review, reads another): a registry's serving file names a registered "
                "record by its name")
    assert bad("lock", "r1-mi", "--name", "r1-mi", "--floor", "assumed", "-o", str(out), root=head) == [
        f"passprice: error: {absolute}"
    ]
    checked = invoke("check", root=head)
    assert checked.exit_code == 2 and "card: '" in checked.stderr and "is an absolute path" in checked.stderr
    diffed = invoke("diff", str(base), str(head), root=head)
    assert diffed.exit_code != 0, diffed.output


# --- simulate --checkpoint/--card of a mixture of experts ------------------------------------------------------------


def test_simulate_of_a_mixture_of_experts_by_checkpoint_and_card_takes_the_routing_its_refusal_asks_for() -> None:
    """``simulate --checkpoint qwen3-30b-a3b-q4_k_m --card h100_sxm5_80gb`` is refused ``Routed`` ("name a routing
    record … with --routing NAME"), but simulate had no --routing: following the advice was "No such option" (exit
    2), and a mixture of experts could be simulated only through a registered serving. It takes --routing now."""
    args = ("simulate", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "h100_sxm5_80gb", "--synthetic", "5")
    out = refused(*args, name="Routed")
    assert "with --routing NAME" in out["message"]
    routed = invoke(*args, "--routing", "uniform", "--json")
    assert routed.exit_code == 0, routed.output
    assert json.loads(routed.stdout)["trace"]["requests"] == 5
    bad(*args, "--routing", "nope", says="routing record 'nope': not found in")


# --- calibrate keeps a stack file's line endings ---------------------------------------------------------------------


def test_calibrate_keeps_a_crlf_stack_file_in_crlf(tmp_path: Path) -> None:
    """``calibrate --stack lmdeploy-turbomind-2312`` on its stack file saved with CRLF line endings (an editor on
    Windows) rewrote every line in LF (exit 0, the same 11 facts re-fitted: a pull request diff of the whole file),
    though ``fact set`` keeps a card's CRLF. The file is read without newline translation and written back in its
    own line endings: re-fitting the same runs leaves it byte for byte as it was."""
    root = copy_root(tmp_path)
    stack = root / "facts" / "stacks" / "lmdeploy-turbomind-2312.toml"
    crlf = stack.read_bytes().replace(b"\n", b"\r\n")
    stack.write_bytes(crlf)
    result = invoke("calibrate", "--stack", "lmdeploy-turbomind-2312", root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "wrote 11 derived facts to facts/stacks/lmdeploy-turbomind-2312.toml"
    assert stack.read_bytes() == crlf


# --- audit --fact: a card path with a colon, a drafting method's path out of range ----------------------------------


def test_audit_fact_of_a_card_named_by_a_path_holding_a_colon(tmp_path: Path) -> None:
    """``audit --fact /reg:2024/facts/cards/h200_sxm_141gb.toml:memory.bandwidth`` (a registry in a folder whose
    name holds a colon; a card may be named by its file) split at the first colon: "/…/reg: no such card file"
    (exit 2). A fact path holds no colon, so the last one splits CARD from PATH."""
    root = copy_root(tmp_path / "reg:2024")
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    result = invoke("audit", "--fact", f"{card}:memory.bandwidth", root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "audit of fact h200_sxm_141gb:memory.bandwidth"


@pytest.mark.parametrize("path", ["acceptance.0", "acceptance.01", "memory.bandwidth"])
def test_a_drafting_methods_fact_path_it_has_not_is_refused_by_the_method(path: str) -> None:
    """``audit --fact qwen35-mtp:acceptance.0`` and ``fact show qwen35-mtp acceptance.0`` said "card 'qwen35-mtp':
    not found …; qwen35-mtp is a registered drafting method, not a card": a path no drafting method has was taken
    for a card's. The method's file refuses the path by name."""
    line = f"{REPO_DRAFT}: {path}: not a drafting-method fact path (acceptance.1, acceptance.2, …)"
    assert bad("audit", "--fact", f"qwen35-mtp:{path}", says=line) == [f"passprice: error: {line}"]
    assert bad("fact", "show", "qwen35-mtp", path, says=line) == [f"passprice: error: {line}"]


def test_a_source_record_that_is_a_folder_is_not_said_to_not_exist(tmp_path: Path) -> None:
    """``sources/nvidia-h200-product-page.toml`` (the datasheet's until cite102) a folder: ``audit r1-qwen7b-h200``
    said "… nvidia-h200-product-page.toml
    does not exist: write it" (while check said "is a folder, not a source file"). It says what is there."""
    root = copy_root(tmp_path)
    record = root / "sources" / "nvidia-h200-product-page.toml"
    record.unlink()
    record.mkdir()
    lines = bad("audit", "r1-qwen7b-h200", root=root, says=(
        f"{root}/facts/cards/h200_sxm_141gb.toml: memory.capacity.source: no source 'nvidia-h200-product-page' "
        "(sources/"
        "nvidia-h200-product-page.toml "
        "is not a source file (a folder, or a link to no file): write it"
    ))
    assert not any("does not exist" in line for line in lines)


def test_an_at_name_in_free_text_never_mentions_anyone_in_a_pr_comment() -> None:
    """Round 16, found and left: a source title or locator holding ``@octocat`` reached the markdown PR comment as
    a mention (GitHub notifies the user). Free text now carries a zero-width space after each ``@``."""
    from passprice.tables import markdown_text

    assert markdown_text("ping @octocat & <b>") == "ping @&#8203;octocat &amp; &lt;b&gt;"
    assert "@octocat" not in markdown_text("cc @octocat")


def test_calibrate_writes_the_stack_file_under_its_edit_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 16, found and left: `calibrate` rewrote a stack file without the lock `fact set` holds for its
    read-modify-write, so a concurrent edit of the file could be lost. The file is now read again and replaced
    inside :func:`passprice.edit.locked` (the write observed while the lock is held)."""
    import contextlib
    from collections.abc import Iterator

    from cli_helpers import copy_root
    from passprice import edit, files
    from passprice.calibrate import calibrate, write_calibration
    from passprice.registry import Root

    root = Root(copy_root(tmp_path))
    held: list[Path] = []
    writes: list[tuple[Path, bool]] = []
    real_write = files.write_atomically

    @contextlib.contextmanager
    def recording(file: Path, wait_s: float = 10.0) -> Iterator[None]:
        held.append(file)
        try:
            yield
        finally:
            held.remove(file)

    def write(path: Path, text: str, force: bool = False) -> None:
        writes.append((path, path in held))
        real_write(path, text, force=force)

    monkeypatch.setattr(edit, "locked", recording)
    monkeypatch.setattr(files, "write_atomically", write)
    path = write_calibration(root, calibrate(root, "llamacpp-cuda-2405"))
    assert writes == [(path, True)]
