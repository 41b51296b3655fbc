"""passprice diff: on a throwaway git repository, a raised memory bandwidth and a weakened stream share show up with
old and new values, the weakening is flagged, every lock is re-priced on both sides (the numbers checked against
pricing with the library), a locked price that moves without its lock re-locked exits 1, as does breaking a lock's
floor, and a re-locked one passes; a file that does not read on a side is reported with its error while the rest is
still reported."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

from passprice.cards import Tier
from passprice.cli import cli
from passprice.edit import apply_edit, locate, set_fact
from passprice.errors import InputError
from passprice.facts import Fact, Provenance
from passprice.locks import make_lock, read_lock, write_lock
from passprice.registry import Root
from passprice.review import diff, diff_markdown, diff_text
from passprice.review.sides import file_kind
from passprice.serving import price_serving
from passprice.servings import load_spec, resolve

REPO = Path(__file__).parent.parent
CARD = "h200_sxm_141gb"
CARD_FILE = f"facts/cards/{CARD}.toml"
LOCK = "r1-qwen7b-h200"
LOCK_FILE = f"locks/{LOCK}.lock.toml"
#: The Gated-DeltaNet hybrid: its recurrent state is rewritten in place every pass, so its price rests on
#: streams.rewrite (DeepSeek-R1-Distill-Qwen-7B's does not).
MTP = "qwen35-27b-h200-mtp"
MTP_FILE = f"locks/{MTP}.lock.toml"
NEW_CITE = "engineering estimate: BabelStream Mul as measured on the H100 SXM, scaled by the H200's memory clock"


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity; its standard output."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def edit_fact(repo: Path, path: str, **entry: object) -> None:
    root = Root(repo)
    apply_edit(set_fact(locate(root, CARD, path), entry, root.schema))


@attrs.frozen
class Repo:
    """The throwaway repository: ``path``, and the commits ``locked`` (the locks written: r1 and the hybrid, each
    with its default policy), ``faster`` (memory.bandwidth raised, the locks not updated), ``weaker``
    (streams.rewrite weakened, on top), ``relocked`` (memory.bandwidth raised and both locks re-locked with
    ``lock --update``, on ``locked``); branch ``main`` is at ``locked``, branch ``pr`` at ``weaker``."""

    path: Path
    locked: str
    faster: str
    weaker: str
    relocked: str


def make_lock_file(path: Path, name: str, serving: str) -> None:
    root = Root(path)
    resolved = resolve(root, load_spec(root, serving))
    write_lock(path / f"locks/{name}.lock.toml", make_lock(name, "price", resolved, root, serving=serving),
               force=True)


#: The card's stream shares derive from memory.bandwidth; in this repository they are read as shares measured on
#: their own (the bandwidth a figure of the source), so raising memory.bandwidth moves the locked prices without
#: leaving a derived fact stale (test_a_stale_derived_fact_marks_the_locks_resting_on_it covers that case).
SHARED_INPUT = 'derivation.inputs.bandwidth = { fact = "memory.bandwidth", value = 4.8, unit = "TB/s" }'
OWN_INPUT = (
    'derivation.inputs.bandwidth = { value = 4.8, unit = "TB/s", source = "nvidia-h200-datasheet", '
    "locator = \"Technical Specifications table, H200 SXM column: 'GPU Memory Bandwidth 4.8TB/s'\" }"
)


def make_repo(path: Path, branch: str = "main") -> Repo:
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    card = path / CARD_FILE
    text = card.read_text(encoding="utf-8")
    assert text.count(SHARED_INPUT) == 3
    card.write_text(text.replace(SHARED_INPUT, OWN_INPUT), encoding="utf-8")
    git(path, "init", "-q", "-b", branch)
    commit_all(path, "facts")
    (path / "locks").mkdir()  # a writer never creates a missing folder
    make_lock_file(path, LOCK, LOCK)
    make_lock_file(path, MTP, MTP)
    locked = commit_all(path, "lock")
    git(path, "checkout", "-q", "-b", "pr")
    bandwidth = read_fact(path, "memory.bandwidth")
    edit_fact(
        path, "memory.bandwidth", value=5.2, unit="TB/s", provenance="published", source=bandwidth.source,
        locator=bandwidth.locator,
    )
    faster = commit_all(path, "raise memory.bandwidth")
    edit_fact(
        path, "streams.rewrite", value=0.8, unit="1", provenance="estimated", source="azure-ai-benchmarking-guide",
        locator=NEW_CITE,
    )
    weaker = commit_all(path, "weaken streams.rewrite")
    git(path, "checkout", "-q", "-b", "relocked", faster)
    for name in (LOCK, MTP):
        make_lock_file(path, name, name)
    relocked = commit_all(path, "re-lock")
    git(path, "checkout", "-q", "pr")
    return Repo(path, locked, faster, weaker, relocked)


def read_fact(path: Path, fact: str) -> Fact:
    from passprice.cards import load_card

    return load_card(Root(path), CARD).facts()[fact]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("diff") / "registry")


@pytest.fixture(scope="module")
def main_to_pr(repo: Repo) -> tuple[int, list[str], str]:
    """``passprice --root REPO diff main pr``'s exit status, standard output as ``--format json`` and ``markdown``,
    and standard error, from one review (test_slip_34's :func:`printed`: the command's bytes), for the tests of
    each format."""
    from test_slip_34 import printed

    return printed(repo.path, "json", "markdown", base="main", head="pr")


def cli_run(args: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    runner = CliRunner()
    if cwd is None:
        result = runner.invoke(cli, args, catch_exceptions=False)
    else:
        old = Path.cwd()
        os.chdir(cwd)
        try:
            result = runner.invoke(cli, args, catch_exceptions=False)
        finally:
            os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def test_raised_bandwidth_moves_the_locked_prices_and_fails_until_they_are_re_locked(repo: Repo) -> None:
    d = diff(Root(repo.path), repo.locked, repo.faster)
    assert [f.path for f in d.files] == [CARD_FILE]
    (change,) = d.files[0].facts
    assert change.path == "memory.bandwidth" and change.change == "changed" and change.fields == ("value",)
    assert change.old is not None and change.new is not None
    assert (change.old.amount, change.old.unit, change.new.amount, change.new.unit) == (4.8, "TB/s", 5.2, "TB/s")
    assert change.relative == pytest.approx(0.4 / 4.8, rel=1e-12)
    assert not change.weakened and change.old.citation() == change.new.citation()
    lock = {x.name: x for x in d.locks}[LOCK]
    assert [x.name for x in d.locks] == [MTP, LOCK] and d.unaffected == ()
    assert lock.changed == ("memory.bandwidth",) and lock.inputs == ("facts",)
    assert lock.held and lock.holds and not lock.breaks
    # The price moved and the lock still records the old one: unreviewed, the review fails (as cargo --locked).
    assert lock.moved == lock.stale == "memory_s" and lock.unreviewed
    assert lock.review() == "price moved, lock not updated (memory_s)"
    assert d.exit_status == 1 and d.stale == d.locks and d.broken == ()

    # The same prices, made with the library: BASE's card is the lock's pinned card (the lock was written on BASE's
    # facts, so BASE's price is its recorded one); HEAD's is that card with the new bandwidth.
    recorded = read_lock(repo.path / LOCK_FILE)
    assert lock.before.price == recorded.price == lock.recorded
    resolved = resolve(Root(repo.path), recorded.spec)
    card = recorded.pinned_card()
    faster = attrs.evolve(card, memory=Tier(card.memory.capacity, change.new))
    head_cost = price_serving(resolved.header, faster, resolved.serving)
    base_cost = price_serving(resolved.header, card, resolved.serving)
    assert lock.before.tokens_per_s == base_cost.tokens_per_s
    assert lock.after.tokens_per_s == head_cost.tokens_per_s
    assert lock.after.price is not None and lock.after.price["pass_s"] == head_cost.pass_s
    assert lock.before.price is not None and lock.before.price["binds"] == lock.after.price["binds"] == "memory"
    # Hand check: batch one binds on memory, dominated by the weights, and every stream share is a share of
    # memory.bandwidth, so tokens/s moves by the bandwidth ratio.
    assert base_cost.weight_bytes > 10 * base_cost.sequence_bytes
    assert lock.after.tokens_per_s / lock.before.tokens_per_s == pytest.approx(5.2 / 4.8, rel=1e-12)
    assert lock.relative == pytest.approx(5.2 / 4.8 - 1, rel=1e-9)

    # Re-locked in the same change (lock --update): reviewed, nothing stale, the recorded price shown moving; the
    # only reason the review still fails is the bandwidth's quote, which states 4.8TB/s, not its value 5.2 TB/s
    # (test_fix53w: a quote found in its source's stored excerpt stating another figure is a MISMATCH).
    d = diff(Root(repo.path), repo.locked, repo.relocked)
    assert d.stale == () and d.broken == () and [x.review() for x in d.locks] == ["re-locked", "re-locked"]
    assert [(f.name, c.path) for f, c in d.quotes_mismatched] == [(CARD, "memory.bandwidth")] and d.exit_status == 1
    lock = {x.name: x for x in d.locks}[LOCK]
    assert lock.recorded_before == recorded.price and lock.recorded == lock.after.price
    assert d.summary() == (
        "1 fact changed in 1 file, 1 to verify in its source; 1 fact's quotes state another figure than its own; "
        "2 locks affected, 2 re-locked; 4 servings no lock pins move, 1 more only a term of its price (memory_s) "
        "(not locked, informational)"
    )
    # The registered servings on the card that no lock names move too: shown, never failing the review. Every
    # stream share is a share of memory.bandwidth, so each one's memory time moves by the bandwidth ratio.
    assert [m.name for m in d.unlocked] == [
        "gpt-oss-120b-h200", "gpt-oss-20b-h200", "qwen3-30b-a3b-h200", "qwen35-27b-h200-chat", "qwen3next-80b-a3b-h200"
    ]
    assert d.to_json()["unlocked"][0]["serving"] == "gpt-oss-120b-h200"
    for m in d.unlocked:
        assert m.before.price is not None and m.after.price is not None and m.changed == ("memory.bandwidth",)
        assert m.after.price["memory_s"] / m.before.price["memory_s"] == pytest.approx(4.8 / 5.2, rel=1e-12)
    markdown = diff_markdown(d)
    # Fails: the bandwidth moved to 5.2 TB/s under a locator that still quotes 4.8TB/s.
    assert markdown.splitlines()[0].startswith("❌ **passprice diff**")
    assert f"| `{LOCK}` | `memory.bandwidth` | held → still holds | 996.1 → 1,079.1 | 996.1 | 1,079.1 | +8.333 % | " \
        "memory | re-locked |" in markdown


def test_weakened_rewrite_breaks_the_lock_that_rests_on_it_only(repo: Repo) -> None:
    d = diff(Root(repo.path), repo.faster, repo.weaker)
    (change,) = d.files[0].facts
    assert change.path == "streams.rewrite" and change.weakened and not change.strengthened
    assert change.old is not None and change.new is not None
    assert (change.old.amount, change.new.amount) == (0.8333, 0.8)
    assert (change.old.provenance, change.new.provenance) == (Provenance.MEASURED, Provenance.ESTIMATED)
    assert change.new.locator == NEW_CITE and (change.old.locator or "").startswith("Azure_Results/ND_H200_v5_results")
    assert change.relative == pytest.approx((0.8 - 0.8333) / 0.8333, rel=1e-12)
    assert set(change.fields) == {"value", "provenance", "locator", "note", "derivation"}  # note, derivation removed
    locks = {x.name: x for x in d.locks}
    mtp = locks[MTP]
    assert mtp.held and not mtp.holds and mtp.breaks and mtp.changed == ("streams.rewrite",)
    assert mtp.verdict is not None
    assert [(o.path, o.provenance, o.floor) for o in mtp.verdict.offences] == [
        ("streams.rewrite", Provenance.ESTIMATED, Provenance.MEASURED)
    ]
    assert mtp.after.price is not None and mtp.after.price["rests_on"]["streams.rewrite"] == "estimated"
    assert mtp.relative is not None and mtp.relative < 0 and mtp.unreviewed
    # A dense-attention checkpoint keeps no recurrent state: its price does not rest on the rewrite share, which
    # neither moves it nor breaks its floors. It is shown only because BASE left it out of date (the bandwidth).
    r1 = locks[LOCK]
    assert r1.changed == () and r1.holds and not r1.breaks and r1.moved is None
    assert r1.stale == "memory_s" and not r1.unreviewed
    assert r1.review() == "out of date already on BASE (memory_s): re-lock it"
    assert r1.after.price is not None and "streams.rewrite" not in r1.after.price["rests_on"]
    assert d.exit_status == 1 and d.weakened and d.broken == (mtp,)
    assert d.summary() == (
        # left51: r1-qwen7b-h200, which the change does not touch, is out of date already on BASE, not affected
        # tests/test_fix154.py: the estimate's basis names no figure and its value moved: asked what gives 0.8
        "1 fact changed in 1 file, 1 weakened, 1 to verify in its source; 1 lock affected, 1 breaks its floors, 1 "
        "price moved unreviewed; "
        "1 lock out of date already on BASE, which this change does not touch: 1 recording a price BASE's inputs no "
        "longer give (re-lock); 1 serving no lock pins moves, 1 more only a term of its price (memory_s) (not locked, "
        "informational)"
    )
    assert [(m.name, m.changed, m.moved) for m in d.unlocked] == [
        ("qwen35-27b-h200-chat", ("streams.rewrite",), "memory_s"),
        ("qwen3next-80b-a3b-h200", ("streams.rewrite",), "memory_s"),
    ]
    # From the re-locked commit, the weakening alone: the dense lock is unaffected, and summarised as such.
    d = diff(Root(repo.path), repo.relocked, repo.weaker)
    assert [x.name for x in d.locks] == [MTP, LOCK]  # the lock files differ (HEAD's are the un-relocked ones)


def test_both_commits_through_the_command_line(repo: Repo, main_to_pr: tuple[int, list[str], str]) -> None:
    code, (out, _), err = main_to_pr
    assert code == 1, err
    assert err == (
        f"passprice: refused: the change breaks lock {MTP} (a fact below a floor: restore it, or re-lock with the "
        f"floor loosened, `passprice lock --update -o {MTP_FILE} --force --require streams.rewrite=estimated`, which "
        f"the review shows as a loosened floor; `--update` alone keeps the floors and refuses); it moves the locked "
        "price of "
        f"{LOCK} without re-locking (review the move, then `passprice lock --update -o {LOCK_FILE}`); 1 fact's "
        f"quotes state another figure than its own ({CARD}:memory.bandwidth): the value and the words it cites "
        "disagree; quote the words of the document stating the value, or set the value they state\n"
    )
    data = json.loads(out)
    assert data["exit_status"] == 1 and data["weakened"] == [f"{CARD}:streams.rewrite"] and data["broken"] == [MTP]
    assert data["stale"] == [MTP, LOCK] and data["unaffected"] == []
    facts = {c["path"]: c for c in data["files"][0]["facts"]}
    assert set(facts) == {"memory.bandwidth", "streams.rewrite"}
    bw = facts["memory.bandwidth"]
    assert (bw["old"]["value"], bw["old"]["unit"], bw["new"]["value"], bw["new"]["unit"]) == (4.8, "TB/s", 5.2, "TB/s")
    assert bw["old"]["base_value"] == 4.8e12 and bw["new"]["base_value"] == 5.2e12
    assert bw["relative_change"] == pytest.approx(1 / 12, rel=1e-12) and not bw["weakened"]
    rw = facts["streams.rewrite"]
    assert rw["weakened"] and rw["old"]["provenance"] == "measured" and rw["new"]["provenance"] == "estimated"
    lock = {x["name"]: x for x in data["locks"]}[LOCK]
    assert not lock["breaks"] and lock["holds"] and lock["held"] and lock["stale"] == "memory_s"
    assert lock["changed"] == ["memory.bandwidth"]  # not streams.rewrite: the price does not rest on it
    mtp = {x["name"]: x for x in data["locks"]}[MTP]
    assert mtp["changed"] == ["memory.bandwidth", "streams.rewrite"]
    assert mtp["verdict"]["refusal"] == "LockFloor"
    assert mtp["verdict"]["offending"] == [{"path": "streams.rewrite", "provenance": "estimated", "floor": "measured"}]
    recorded = read_lock(repo.path / LOCK_FILE)
    assert lock["before"] == recorded.price == lock["recorded"]
    assert lock["after"]["tokens_per_s"] / lock["before"]["tokens_per_s"] == pytest.approx(5.2 / 4.8, rel=1e-12)
    assert lock["after"]["binds"] == "memory"
    assert data["pricing_model"]["changed"] is False


def test_default_base_is_the_merge_base_with_main_and_head_the_work_tree(repo: Repo, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "-b", "pr", str(repo.path), str(clone)], check=True)
    git(clone, "branch", "-q", "main", "origin/main")
    # An uncommitted change in the work tree is part of HEAD.
    text = (clone / CARD_FILE).read_text(encoding="utf-8")
    (clone / CARD_FILE).write_text(text.replace("value = 0.8646", "value = 0.86"), encoding="utf-8")
    code, out, _ = cli_run(["diff"], cwd=clone)
    assert code == 1
    # ❌ heads a failing review, as the markdown's does (tests/test_walk108.py)
    assert out.splitlines()[0] == f"❌ passprice diff: merge base with main ({repo.locked[:12]}) → work tree"
    # 0.86 does not follow from its derivation (Triad over the bandwidth), which fails the diff as it fails check.
    assert (
        "3 facts changed in 1 file, 1 weakened, 2 to verify in their sources; 1 fact's quotes state another figure "
        "than its own; 1 derived fact not following; 2 locks affected, 1 breaks its floors, "
        "2 prices moved unreviewed, 2 rest on derived facts that do not follow"
    ) in out
    assert "rests on streams.append, not following from its derivation: correct it" in out
    assert "streams.append    0.8646 → 0.86" in out
    assert "measured → estimated (WEAKER)" in out
    assert "floors    held → BROKEN: streams.rewrite is estimated, below the floor measured" in out


def test_no_main_branch_falls_back(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "trunk-only", branch="trunk")
    d = diff(Root(repo.path))
    # No main or master: the merge base with origin/main is not there either, so HEAD (the work tree is clean).
    assert d.base.revision == repo.weaker and "no main or master branch" in d.base.label
    # Nothing changed; the locks are out of date on BASE already (the bandwidth was raised without re-locking), which
    # fails the review all the same: HEAD's locks do not record HEAD's prices.
    assert d.files == () and d.exit_status == 1 and d.broken == d.locks[:1]
    # left51: the lock below its floor is affected (and out of date on BASE too), the other only out of date on BASE
    assert d.summary() == ("no fact changed; 1 lock affected, 1 breaks its floors, 1 of them out of date already on "
                           "BASE; 1 lock out of date already on BASE, which this change does not touch: 1 recording a "
                           "price BASE's inputs no longer give (re-lock)")
    d = diff(Root(repo.path), "relocked", "relocked")
    assert d.files == () and d.locks == () and d.exit_status == 0
    assert d.summary() == "no changes to facts, registry, locks or the pricing model; 2 locks unaffected"
    git(repo.path, "branch", "-q", "master", repo.locked)
    d = diff(Root(repo.path))
    assert d.base.revision == repo.locked and d.base.label.startswith("merge base with master")


def test_markdown_is_a_pull_request_comment(main_to_pr: tuple[int, list[str], str]) -> None:
    _, (_, text), _ = main_to_pr
    lines = text.splitlines()
    assert lines[0].startswith("❌ **passprice diff** `main (")
    assert lines[0].endswith(
        "2 facts changed in 1 file, 1 weakened, 2 to verify in their sources; 1 fact's quotes state another figure "
        "than its own; 2 locks affected, 1 breaks its floors, 2 prices moved unreviewed; 4 servings no lock pins "
        "move, 1 more only a term of its price (memory_s) (not locked, informational)"
    )
    assert "| file | fact | before | after | change | provenance | cite |" in lines
    row = next(line for line in lines if "`streams.rewrite` | 0.8333 | 0.8 |" in line)
    assert "measured → estimated ⚠️ **weaker**" in row and row.endswith("| changed, below |")
    row = next(line for line in lines if "`memory.bandwidth` | 4.8 TB/s | 5.2 TB/s | +8.333 % | published |" in line)
    assert row.endswith("| unchanged |")
    assert "| lock | changed | floors | recorded | tokens/s BASE | tokens/s HEAD | change | binds | review |" in lines
    # The new citation on its own line below the table, the old one after it (not `A → B` run together).
    assert f"  - **cite (new)**: azure-ai-benchmarking-guide: {NEW_CITE}" in lines
    was = "  - **cite (was)**: azure-ai-benchmarking-guide: Azure_Results/ND_H200_v5_results.md"
    assert any(line.startswith(was) for line in lines)
    lock_row = next(line for line in lines if line.startswith(f"| `{LOCK}` |"))
    assert lock_row == (
        f"| `{LOCK}` | `memory.bandwidth` | held → still holds | 996.1 | 996.1 | 1,079.1 | +8.333 % | memory | "
        "❌ price moved, lock not updated (memory_s) |"
    )
    mtp_row = next(line for line in lines if line.startswith(f"| `{MTP}` |"))
    assert mtp_row.startswith(
        f"| `{MTP}` | `memory.bandwidth`, `streams.rewrite` | held → ❌ BROKEN: streams.rewrite is estimated, below "
        "the floor measured (elasticity +0.227: +1 % of it moves tokens/s +0.227 %) | 3,644.2 | 3,644.2 | 3,911.9 | "
        "+7.345 % | memory | ❌ price moved"
    )


def test_a_file_that_does_not_parse_is_reported_and_the_rest_still_is(repo: Repo, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    git(clone, "checkout", "-q", repo.weaker)
    broken = clone / "facts/cards/b200.toml"
    broken.write_text(broken.read_text(encoding="utf-8").replace("[memory.bandwidth]", "[memory.bandwidth", 1))
    bad_lock = clone / "locks/bad.lock.toml"
    bad_lock.write_text("[lock]\nname = 'bad'\n", encoding="utf-8")
    d = diff(Root(clone), repo.faster)
    by_path = {f.path: f for f in d.files}
    assert set(by_path) == {CARD_FILE, "facts/cards/b200.toml", "locks/bad.lock.toml"}
    b200 = by_path["facts/cards/b200.toml"]
    assert b200.status == "changed" and not b200.compared and b200.base_errors == () and b200.facts == ()
    (error,) = b200.head_errors
    assert error.startswith("facts/cards/b200.toml: not valid TOML:") and "line" in error
    assert str(clone) not in error
    assert by_path["locks/bad.lock.toml"].head_errors  # every schema problem of the lock, named
    # The rest is still reported: the weakened fact and the lock it breaks.
    assert [c.path for c in by_path[CARD_FILE].facts] == ["streams.rewrite"]
    assert [lock.name for lock in d.broken] == [MTP]
    assert d.exit_status == 2  # a file that does not read on HEAD is bad input
    text = diff_text(d)
    assert "does not read on HEAD:\n    facts/cards/b200.toml: not valid TOML:" in text
    # left51: every part that changed is named (the provenance and citation were left out before)
    assert ("streams.rewrite  0.8333 → 0.8  (-3.996 %, provenance, citation changed, note removed, derivation "
            "removed)") in text
    markdown = diff_markdown(d)
    assert "#### Files that do not read" in markdown
    assert "| `facts/cards/b200.toml` | HEAD | not valid TOML" in markdown
    from test_slip_34 import shown  # `--root CLONE diff FASTER --format markdown` prints, of this one review

    code, (out,), err = shown(d, "markdown")
    assert code == 2 and "b200.toml does not read on HEAD" in err and "#### Locks" in out

    # The other way round: broken on BASE, mended on HEAD, is reported on BASE and is no failure of its own (the
    # review fails on HEAD's locks only, which record prices from before the bandwidth was raised).
    git(clone, "add", "-A")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "broken")
    d = diff(Root(clone), "HEAD", repo.weaker)
    b200 = {f.path: f for f in d.files}["facts/cards/b200.toml"]
    assert b200.base_errors and not b200.head_errors
    assert d.exit_status == 1 and {x.name for x in d.stale} == {MTP, LOCK} and not d.unreadable[0].head_errors


def test_a_card_whose_file_does_not_read_still_shows_its_lock(repo: Repo, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    git(clone, "checkout", "-q", repo.faster)
    card = clone / CARD_FILE
    card.write_text(card.read_text(encoding="utf-8").replace('unit = "TB/s"', 'unit = "GB"', 1), encoding="utf-8")
    d = diff(Root(clone), repo.faster)
    (f,) = d.files
    assert f.head_errors == (
        f"{CARD_FILE}: memory.bandwidth.unit: 'GB' is not allowed here "
        "(one of 'B/s', 'kB/s', 'MB/s', 'GB/s', 'TB/s', 'PB/s', 'KiB/s', 'MiB/s', 'GiB/s', "
        "'TiB/s')",
    )
    assert [x.name for x in d.locks] == [MTP, LOCK]
    for lock in d.locks:
        assert lock.changed == () and lock.breaks and lock.after.error is not None and lock.before.price is not None
        assert lock.note is not None and "does not read on a side" in lock.note
    assert d.exit_status == 2


def test_two_folders_and_a_folder_that_is_not_a_checkout(repo: Repo, tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    for folder, commit in ((base, repo.locked), (head, repo.weaker)):
        subprocess.run(["git", "clone", "-q", str(repo.path), str(folder)], check=True)
        git(folder, "checkout", "-q", commit)
        shutil.rmtree(folder / ".git")
    d = diff(Root(head), str(base), str(head))
    assert d.base.folder == str(base) and d.head.folder == str(head)
    assert {c.path for c in d.files[0].facts} == {"memory.bandwidth", "streams.rewrite"}
    assert d.exit_status == 1
    with pytest.raises(InputError, match="not a git checkout"):
        diff(Root(head), "HEAD~1")
    code, _, err = cli_run(["--root", str(head), "diff", "main"])
    assert code == 2 and "not a git checkout" in err
    code, _, err = cli_run(["--root", str(repo.path), "diff", "no-such-branch"])
    assert code == 2 and "no-such-branch: neither a folder nor a revision of the git checkout" in err
    code, _, err = cli_run(["--root", str(repo.path), "diff", str(tmp_path)])
    assert code == 2 and "not a passprice root" in err


def test_a_removed_lock_is_shown_and_fails_while_its_serving_is_registered(repo: Repo, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    git(clone, "checkout", "-q", repo.weaker)
    (clone / LOCK_FILE).unlink()
    (clone / MTP_FILE).unlink()
    d = diff(Root(clone), repo.locked)
    assert [x.name for x in d.locks] == [MTP, LOCK]
    for lock in d.locks:
        assert lock.removed and not lock.breaks and lock.floors() == "lock removed"
        # Its serving is still registered and no lock of it is left: the floors it was priced under are dropped.
        assert lock.drops_floors and lock.review() == "removed, dropping floors"
    assert [f.status for f in d.files if f.kind == "lock"] == ["removed", "removed"]
    assert d.exit_status == 1 and d.dropping == d.locks
    assert f"  {LOCK} ({LOCK_FILE}, card {CARD}, price): removed, dropping floors\n" in diff_text(d)
    assert f"#### Locks removed\n\n- ❌ removed `{MTP}` (`{MTP_FILE}`, price lock of serving `{MTP}`, recorded " in (
        diff_markdown(d)
    )


def test_a_drafting_method_change(repo: Repo, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    method = clone / "facts/drafts/toy.toml"
    method.parent.mkdir(parents=True, exist_ok=True)
    method.write_text(
        '[method]\nname = "toy"\n\n[acceptance.1]\nvalue = 0.8\nunit = "1"\nprovenance = "measured"\n'
        'source = "qwen35-mtp-review"\nlocator = "a measurement, cited"\n',
        encoding="utf-8",
    )
    d = diff(Root(clone), "HEAD")
    (f,) = d.files
    assert (f.kind, f.name, f.status) == ("draft", "toy", "added")
    assert [(c.path, c.lock_path, c.change) for c in f.facts] == [("acceptance.1", "draft.acceptance.1", "added")]


def test_file_kinds() -> None:
    assert file_kind("facts/cards/x.toml") == ("card", "x")
    assert file_kind("facts/drafts/m.toml") == ("draft", "m")
    assert file_kind("registry/servings/s.toml") == ("serving", "s")
    assert file_kind("registry/checkpoints/c.toml") == ("checkpoint", "c")
    assert file_kind("locks/l.lock.toml") == ("lock", "l")
    assert file_kind("schema/card.schema.json") == ("schema", "card.schema")
    assert file_kind("facts/cards/README.md") == ("other", "README.md")


def test_a_stale_derived_fact_marks_the_locks_resting_on_it(tmp_path: Path) -> None:
    # The registered card derives its stream shares from memory.bandwidth: raising the bandwidth leaves them stale,
    # and a price on them (+8.3 % tokens/s, which the recomputed shares would cancel) is no price to publish, even
    # re-locked. The diff marks each lock resting on a stale share and fails, as check does.
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    (path / "locks").mkdir()
    make_lock_file(path, LOCK, LOCK)
    commit_all(path, "lock")
    bandwidth = read_fact(path, "memory.bandwidth")
    edit_fact(path, "memory.bandwidth", value=5.2, unit="TB/s", provenance="published", source=bandwidth.source,
              locator=bandwidth.locator)  # fmt: skip
    make_lock_file(path, LOCK, LOCK)  # re-locked on the stale shares
    d = diff(Root(path))
    lock = {x.name: x for x in d.locks}[LOCK]
    assert [(f.path, f.kind, f.expected) for f in lock.unsound] == [
        ("streams.read", "stale", "0.8615"), ("streams.append", "stale", "0.7981")
    ]
    assert lock.review() == "rests on stale streams.read, streams.append: recompute them; re-locked"
    assert lock.relative == pytest.approx(5.2 / 4.8 - 1, rel=1e-9)  # the move a recomputation would cancel
    assert d.exit_status == 1 and d.resting_on_unsound == (lock,) and not d.stale and not d.broken
    assert d.summary() == (
        "1 fact changed in 1 file, 1 to verify in its source; 1 fact's quotes state another figure than its own; 3 "
        "derived facts stale; 1 lock affected, 1 rests on derived facts that do not follow, 1 re-locked; 5 servings "
        "no lock pins move, 1 more only a term of its price (memory_s) (not locked, informational)"
    )
    # The unlocked servings on the card move too (the hybrid's serving is unlocked here), on the same stale shares.
    assert [m.name for m in d.unlocked] == [
        "gpt-oss-120b-h200", "gpt-oss-20b-h200", "qwen3-30b-a3b-h200", "qwen35-27b-h200-chat", MTP,
        "qwen3next-80b-a3b-h200"
    ]
    # Each rests on the stale read share (and those with sequences appending rows, on the stale append share).
    assert {m.name: m.unsound for m in d.unlocked}["gpt-oss-20b-h200"][0] == "streams.read"
    assert all("streams.read" in m.unsound for m in d.unlocked)
    assert "HEAD's price rests on streams.read" in diff_text(d)
    # The same three findings are what check reports on HEAD (the review fails wherever check would), listed once.
    assert len(d.head_check) == 3 and all("is stale" in p for p in d.head_check), d.head_check
    assert d.check_beyond == ()
    text = diff_text(d)
    assert "    tokens/s  996.1 → 1,079.1  (+8.333 %)  HEAD's price rests on derived facts that do not follow: not a " \
        "price to publish" in text
    row = next(line for line in diff_markdown(d).splitlines() if line.startswith(f"| `{LOCK}` |"))
    assert "| ❌ 1,079.1 (on stale facts) |" in row and row.endswith(
        "| ❌ rests on stale streams.read, streams.append: recompute them; re-locked |"
    )
    from test_slip_34 import shown  # `--root PATH diff --format json` prints, of this one review

    code, (out,), err = shown(d, "json")
    assert code == 1 and json.loads(out)["resting_on_unsound"] == [LOCK]
    assert err == (
        "passprice: refused: derived facts do not follow from their inputs: h200_sxm_141gb:streams.read (stale), "
        "h200_sxm_141gb:streams.rewrite (stale), h200_sxm_141gb:streams.append (stale); the prices of "
        f"{LOCK} rest on them (recompute them: `passprice fact recompute h200_sxm_141gb`; "
        "passprice check names each input that moved); 1 fact's quotes state another figure than its own "
        "(h200_sxm_141gb:memory.bandwidth): the value and the words it cites disagree; quote the words of the document "
        "stating the value, or set the value they state\n"
    )
    # Recomputed (each share's bandwidth input recorded at 5.2 TB/s, the value it now gives) and re-locked, nothing
    # rests on a derived fact that does not follow: the price barely moves, as the same measured rates over a higher
    # peak are lower shares. The one reason left to fail is the bandwidth's quote, still stating 4.8TB/s.
    card = path / CARD_FILE
    text = card.read_text(encoding="utf-8").replace(
        'derivation.inputs.bandwidth = { fact = "memory.bandwidth", value = 4.8, unit = "TB/s" }',
        'derivation.inputs.bandwidth = { fact = "memory.bandwidth", value = 5.2, unit = "TB/s" }',
    )
    for old, new in (("0.9333", "0.8615"), ("0.8333", "0.7692"), ("0.8646", "0.7981")):
        text = text.replace(f"value = {old}\n", f"value = {new}\n", 1)
    # What the command the refusal names writes: exactly those figures, the rest of the file as it was.
    code, _, err = cli_run(["--root", str(path), "fact", "recompute", CARD], cwd=path)
    assert code == 0, err
    assert card.read_text(encoding="utf-8") == text
    make_lock_file(path, LOCK, LOCK)
    d = diff(Root(path))
    assert d.exit_status == 1 and d.unsound == () and d.resting_on_unsound == () and not d.stale and not d.broken
    assert [(f.name, c.path) for f, c in d.quotes_mismatched] == [(CARD, "memory.bandwidth")]
    lock = {x.name: x for x in d.locks}[LOCK]
    assert lock.unsound == () and lock.review() == "re-locked"
    assert lock.relative is not None and abs(lock.relative) < 1e-4  # 4.48 TB/s read either way, to 4 digits


def test_a_revisions_temporary_copy_leaves_no_objects_in_the_cache(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both sides of ``diff A B`` are copied into temporary folders that live one process: objects keyed by their
    paths would never be asked for again, only fill the cache until its oldest half (the registry's own entries,
    still wanted) is pruned. What is stored is keyed by content: the validated documents, and since round 28 a
    checkpoint entry's header (by its file name and bytes) with what is computed from it alone (its decode steps,
    pass shapes, clean check), which serve the second run; so the second diff of the same revisions stores nothing
    new."""
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(cache_dir))

    def stored(kind: str) -> set[str]:
        folder = cache_dir / kind
        return {p.name for p in folder.iterdir()} if folder.is_dir() else set()

    first = diff(Root(repo.path), repo.locked, repo.faster)
    objects = stored("objects")
    documents = stored("documents")
    assert len(documents) > 20  # every file of both revisions, by content
    again = diff(Root(repo.path), repo.locked, repo.faster)
    assert stored("objects") == objects and stored("documents") == documents
    assert [f.path for f in again.files] == [f.path for f in first.files] == [CARD_FILE]


def test_a_sources_document_path_is_read_once_for_its_bytes() -> None:
    """Issue 13: a revision's source records were parsed twice as it was opened; now once for their bytes, and a key
    written with an escape still names the document."""
    from passprice.review.sides import _named_by_sources, _source_path

    data = b'[source]\n"p\\u0061th" = "registry/docs/x.pdf"\n'
    files = {"sources/a.toml": data, "sources/b.toml": b"not toml [", "facts/cards/c.toml": data}
    _source_path.cache_clear()
    assert _named_by_sources(files) == {"registry/docs/x.pdf"}
    assert _named_by_sources(files) == {"registry/docs/x.pdf"}
    assert _source_path.cache_info().misses == 2  # a.toml's bytes and b.toml's, each parsed once
    assert _source_path(b"[source]\npath = 3\n") is None
