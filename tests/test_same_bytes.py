"""Every fast path of the review (rounds 28-33) changes no byte of what ``passprice diff`` and ``check`` say: one
question, asked once. Each review of a change (a card fact with a hostile note; a checkpoint entry and a source record
in one commit) runs in whole processes with every fast path on (the cache cold, then warm) and once with ALL the old
paths switched off together (:data:`OLD_PATHS`: the cache bypassed, round 31's fit memo off, tomlkit writing the
private copy instead of :mod:`passprice.plaintoml`, round 29's NNLS put back for round 30's and round 37's,
round 36's binding terms for round 37's, every re-fitted file rewritten as before round 33); the same bytes and exit
status each way.

Merged from test_perf_28/29/30/31/33 and test_hostile_56 (1b), whose in-process unit tests stay where they were.
Behaviour only, no timing: what each round's review also promised (a warm run stores nothing new, nothing is keyed by
the temporary folders' paths, no temporary copy is left behind, the cache bypassed writes no cache folder, a warm
``check`` imports no NumPy, the stack's text parsed once with its file held against five times rewritten, cold) is
asserted on the same runs, and one more for the last.

Session 39 (suite46): four changes were reviewed apart, each in 2 to 7 whole processes (~45 s of CPU for the file):
the card fact and the card fact with test_hostile_56's hostile note are one change now (the hostile note's review is
the fact's: every old path, tomlkit writing the card's private copy among them, gives the same bytes as plaintoml,
and what the plain edit's review said is said of it, word for word), and the checkpoint entry and the source record
are one commit (``claims``), reviewed once with every branch each took (a claim changed, a source record's note
changed, nothing re-priced, exit 0)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from passprice.registry import Root

HERE = Path(__file__).resolve().parent
CARD_FILE = "facts/cards/h200_sxm_141gb.toml"
ENTRY_FILE = "registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml"
SOURCE_FILE = "sources/nvidia-h200-datasheet.toml"
FACT_OLD = "[memory.bandwidth]\nvalue = 4.8\n"
# a quote, a backslash, an accent and a non-BMP character, which plaintoml spells otherwise than the file (a tab or
# U+2028 the card refuses: "write it on one line", the same bytes either way); test_hostile_56's 1b
HOSTILE = '[memory.bandwidth]\nvalue = 4.9\nnote = "q\\"u\\\\o \\u00E9 \\U0001F600 \u00e9 end"\n'

#: The driver: ``passprice ARGS`` run as ``python -m passprice`` would, counting the parses of the stack
#: ``llamacpp-cuda-2405``'s text (``STACK_PARSES``: the file it writes the count to); with ``old`` every fast path
#: of rounds 29-33 switched off together (the cache is bypassed by ``--no-cache`` on the command line); with
#: ``rewritten`` only round 33's (every re-fitted file rewritten).
OLD_PATHS = """
import os, runpy, sys, tomllib
if {rewritten!r}:
    import passprice.calibrate, passprice.stackfits
    passprice.calibrate._holds = lambda document, entries: False
    passprice.stackfits._SHIPPED[:] = [(("", "", ""), {{}})]  # the shipped stacks fitted (test_reviewfast159.py)
if {old!r}:
    sys.path.insert(0, {tests!r})
    import passprice.calibrate, passprice.plaintoml
    from reference_fits import reference_binding, reference_nnls
    passprice.calibrate.nnls = reference_nnls  # round 29's NNLS (round 30)
    passprice.calibrate._binding = reference_binding  # round 36's binding terms (round 37)
    passprice.calibrate._FITS_KEPT = 0  # no fit memo (round 31)
    passprice.plaintoml.dumps = lambda document: None  # tomlkit writes the private copy (round 31)
    passprice.calibrate._holds = lambda document, entries: False  # every re-fitted file rewritten (round 33)
stack = 0
loads = tomllib.loads
def count(document):
    global stack
    meta = document.get("stack")  # the stack file's table (a lock's names its checkpoint too)
    stack += isinstance(meta, dict) and "checkpoint" not in document and "b2824" in str(meta.get("builds"))
def counted(text, **kw):
    document = loads(text, **kw)
    count(document)
    return document
tomllib.loads = counted
import passprice.schema  # a stack's text is read by the plain reader since tests/test_cold124.py, not tomllib
plain = passprice.schema._plain_document
def plain_counted(text):
    document = plain(text)
    if document is not None:
        count(document)
    return document
passprice.schema._plain_document = plain_counted
def said():
    if os.environ.get("STACK_PARSES"):
        with open(os.environ["STACK_PARSES"], "w") as f:
            f.write(str(stack))
exit_now = os._exit
os._exit = lambda status: (said(), exit_now(status))
sys.argv = ["passprice", *sys.argv[1:]]
try:
    runpy.run_module("passprice", run_name="__main__")
finally:
    said()
"""


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity; its standard output."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout.strip()


@attrs.frozen
class Repo:
    """A git repository of passprice's own registry: ``base``, and one commit on it changing one card fact with a
    hostile note beside it (``fact``: the H200's memory.bandwidth 4.8 → 4.9 TB/s, which leaves its three stream
    shares stale under five locks; the note test_hostile_56's 1b), and one changing a checkpoint entry's origin and a
    source record's read note (``claims``)."""

    path: Path
    base: str
    fact: str
    claims: str


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    sys.path.insert(0, str(HERE))
    from test_perf_29 import copy_registry

    path = copy_registry(tmp_path_factory.mktemp("same_bytes") / "registry")
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "--no-verify", "-m", "base")
    base = git(path, "rev-parse", "HEAD")
    made = {}
    for name, edits in (
        ("fact", ((CARD_FILE, FACT_OLD, HOSTILE),)),
        ("claims", ((ENTRY_FILE, 'origin = "DeepSeek-R1-Distill-Qwen-7B, Q4_K_M: ',
                     'origin = "DeepSeek-R1-Distill-Qwen-7B (Q4_K_M): '),
                    (SOURCE_FILE, 'read = "', 'read = "Read: '))),
    ):
        git(path, "checkout", "-q", "-b", name, base)
        for rel, old, new in edits:
            file = path / rel
            text = file.read_text(encoding="utf-8")
            assert text.count(old) == 1, (rel, old)
            file.write_text(text.replace(old, new), encoding="utf-8")
        git(path, "commit", "-q", "--no-verify", "-am", name)
        made[name] = git(path, "rev-parse", "HEAD")
    git(path, "checkout", "-q", "main")
    return Repo(path, base, made["fact"], made["claims"])


def run(cwd: Path, cache_dir: Path, tmp: Path, old: bool, *args: str, parses: Path | None = None,
        importtime: bool = False, rewritten: bool = False) -> tuple[int, str, str]:
    """``passprice ARGS`` in a process of its own (the result memo bypassed), with ``cache_dir`` as its cache folder
    and ``tmp`` as its temporary folder; ``old``: every old path (:data:`OLD_PATHS`) and ``--no-cache``; ``parses``:
    where the count of the stack's parses is written; ``rewritten``: only round 33's old path. Exit status, stdout,
    stderr."""
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(cache_dir), "PASSPRICE_NO_MEMO": "1", "TMPDIR": str(tmp)}
    for name in ("PASSPRICE_NO_CACHE", "PASSPRICE_MAX_FIT_RUNS", "STACK_PARSES"):
        env.pop(name, None)
    if parses is not None:
        env["STACK_PARSES"] = str(parses)
    code = OLD_PATHS.format(old=old, rewritten=rewritten, tests=str(HERE))
    done = subprocess.run([sys.executable, *(["-X", "importtime"] if importtime else []), "-c", code,
                           *(["--no-cache"] if old else []), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def stored(cache_dir: Path) -> set[str]:
    """The names of the cache's object entries."""
    folder = cache_dir / "objects"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


@pytest.mark.parametrize("change", ["fact", "claims"])
def test_a_review_is_the_same_bytes_cold_warm_and_with_every_old_path(repo: Repo, tmp_path: Path, change: str) -> None:
    head = getattr(repo, change)
    cache_dir, tmp = tmp_path / "cache", tmp_path / "tmp"
    tmp.mkdir()
    parses = tmp_path / "parses"
    # Cold (an empty cache folder), every fast path on.
    cold = run(repo.path, cache_dir, tmp, False, "diff", repo.base, head, parses=parses)
    objects = stored(cache_dir)
    assert objects  # the headers, decode steps and pass shapes, kept by content
    if change == "fact":
        # The stack's text parsed once (HEAD's check; the copy's reads come from the cache of validated files: its
        # file holds the fit, so it is left as it is; round 33).
        assert parses.read_text() == "1"
    # Warm: the same bytes, and the kept fit findings are the same (round 29).
    warm = run(repo.path, cache_dir, tmp, False, "diff", repo.base, head)
    assert warm == cold
    # A process stores its first 16 pass shapes built (serving._SHAPES_STORED): a review pricing more is wholly
    # kept after a run or two more; then a run finds everything and stores nothing new (nothing is keyed by the
    # temporary folders' paths; round 28). Those runs are the markdown ones, warm, fast, each the same bytes (the
    # registry's fact review stored 12 objects more on its first warm run and nothing on the next: a text run only
    # to see nothing stored was one review more, ~1.2 s of CPU; session 39).
    args = ("diff", repo.base, head, "--format", "markdown")
    objects = stored(cache_dir)
    now = run(repo.path, cache_dir, tmp, False, *args)
    for _ in range(2):
        if stored(cache_dir) == objects:
            break
        objects = stored(cache_dir)
        assert run(repo.path, cache_dir, tmp, False, *args) == now
    assert stored(cache_dir) == objects
    # With every old path switched off and the cache bypassed: the same bytes.
    before = run(repo.path, tmp_path / "unused", tmp, True, *args)
    assert before == now
    assert not (tmp_path / "unused").exists()  # the cache bypassed: no folder made
    # Every temporary copy (both sides, HEAD with its derived facts recomputed) is removed.
    assert list(tmp.iterdir()) == []
    status, out, err = cold
    assert (status, err) == now[0::2]
    if change == "fact":
        assert status == 1, err
        assert "4.8 TB/s → 4.9 TB/s" in out and "4.8 TB/s → 4.9 TB/s" in now[1]
        # the hostile note (test_hostile_56's 1b) shown, in the markdown the old paths' tomlkit wrote the same
        assert any(line.startswith("  - **note**: ") and "\U0001F600" in line for line in now[1].splitlines())
        assert "streams.read: STALE, recomputed 0.9143" in out
        assert "not recomputed" not in out and "not recomputed" not in now[1]  # the copy recomputed and re-fitted
        # The five locks on the card (the shipped stack lock among them) and the four servings on it no lock pins
        # (moe46's gpt-oss-120b-h200 the fourth), each priced with the card's facts recomputed (in one private copy of
        # HEAD since round 28).
        assert out.count("recomputed  tokens/s ") == 9
        assert "5 locks affected" in out and "3 servings no lock pins move, 1 more only a term of its price" in out
        assert err.startswith("passprice: refused: derived facts do not follow from their inputs: ")
        # Cold, with every re-fitted file rewritten (round 33's one old path): the same bytes, and the stack's text
        # parsed five times (HEAD's check, then the copy's parse to set the fit, the plain text's check,
        # write_calibration's own validation, the copy's read of the new text).
        rewrote = run(repo.path, tmp_path / "cache2", tmp, False, *args, parses=parses, rewritten=True)
        assert rewrote == now
        assert parses.read_text() == "5"
    else:
        assert status == 0, err
        assert err == ""
        assert ENTRY_FILE in out and SOURCE_FILE in out
        assert ENTRY_FILE in now[1] and SOURCE_FILE in now[1]


def test_check_is_the_same_bytes_cold_warm_and_with_every_old_path(repo: Repo, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    cold = run(repo.path, tmp_path / "cache", tmp, False, "check")
    assert cold[0] == 0, cold[2]
    # 123: the 10 shipped locks, the stack lock r1-qwen7b-h200-llamacpp among them, moe43's MoE measurement
    # file and its source record, moe44's checkpoint entry, moe45's measurement file and source record, moe46's
    # checkpoint entry, 3 measurement files, 3 source records, 2 servings and lock, and moe48's checkpoint entry,
    # measurement file and source record
    # cite74 (session 42) added the deviceQuery source record that the L40S card cites: 122 -> 123
    # cite81 (session 43) added the Ada and Ampere tuning guides' records the Ada and GA102 cards cite: 123 -> 125
    # 127 since cite102 (the H200 product page's record)
    assert cold[1].startswith("checked 127 files (") and cold[1].endswith("all holds\n")  # 125 before cite90
    # Warm: the same, and the kept fit findings re-run no fit and import no NumPy (round 29).
    status, out, err = run(repo.path, tmp_path / "cache", tmp, False, "check", importtime=True)
    assert (status, out) == cold[:2]
    imported = {line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if line.startswith("import time:")}
    assert "passprice.stackfits" in imported
    assert "numpy" not in imported and "passprice.calibrate" not in imported
    assert run(repo.path, tmp_path / "unused", tmp, True, "check") == cold


def test_sharing_the_recomputed_copy_changes_no_word_of_the_review(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """(Round 28, in process.) The locks' and the unlocked servings' prices with the card's stale facts recomputed
    are made in one private copy of HEAD; made in a copy each (as before round 28), the review says the same."""
    from passprice.review import impacts, rendering, verdict

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    made: list[str] = []
    real = impacts._recomputed_copy

    def counted(*args: object) -> object:
        made.append("copy")
        return real(*args)  # type: ignore[arg-type]

    @contextlib.contextmanager
    def unshared() -> Iterator[None]:
        yield

    # The copies counted on the shared review itself (it was reviewed twice, uncounted then counted, to the same
    # words: one review more, ~1.3 s of CPU; session 39).
    monkeypatch.setattr(impacts, "_recomputed_copy", counted)
    shared = verdict.diff(Root(repo.path), repo.base, repo.fact)
    assert made == ["copy"]  # the locks' copy served the unlocked servings too
    made.clear()
    monkeypatch.setattr(verdict, "_shared_copies", unshared)
    apart = verdict.diff(Root(repo.path), repo.base, repo.fact)
    assert made == ["copy", "copy"]
    for fmt in ("text", "markdown", "json"):
        assert rendering.render(apart, fmt) == rendering.render(shared, fmt)
    assert apart.exit_status == shared.exit_status == 1
    assert [p.name for p in tmp_path.iterdir()] == []
