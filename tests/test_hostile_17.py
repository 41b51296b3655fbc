"""Attack round 17 (issue 13) on the code merged in session 9 (compare, sweep --max-tpot, audit --stack, the review's
unlocked servings, the header cache's "seen before", diff's card-copy sharing, lock's checkout and path rules): each
test builds the input that broke it and asserts what passprice now does with it (exit status and the error line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

# --- (a) compare --cards naming one card twice (its name and its file's path) ----------------------------------------


def test_compare_lists_a_card_named_by_its_name_and_by_its_path_once(tmp_path: Path) -> None:
    """``--cards /ROOT/facts/cards/h100_sxm5_80gb.toml,h100_sxm5_80gb`` gave two identical rows (and "2 of 2 cards"
    in the headroom line): the list was deduplicated by its strings. One row a card file now; a copy of the file
    under another name is another card, and keeps its row."""
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h100_sxm5_80gb.toml"
    copy = tmp_path / "h100copy.toml"
    copy.write_bytes(card.read_bytes())
    link = tmp_path / "h100link.toml"
    link.symlink_to(card)
    result = invoke("compare", "gemma3-270m-h100", "--cards", f"{card},h100_sxm5_80gb,{link},{copy}", "--json",
                    root=root)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert [row["card"] for row in json.loads(result.stdout)["cards"]] == ["h100_sxm5_80gb", "h100copy"]


# --- (b) lock -o outside a checkout whose code differs ----------------------------------------------------------------


def test_a_lock_written_outside_a_checkout_whose_code_differs_is_written(tmp_path: Path) -> None:
    """``lock SERVING -o /elsewhere/x.lock.toml`` with ``--root`` a checkout whose formulas differ was refused (exit
    2: "a lock written now would record the running code's prices, which this checkout's review does not use"),
    though a lock outside the root is the user's own, which no review of the checkout reads. It is written now,
    under the warning check gives; a lock into the checkout's locks/ is still refused."""
    import shutil

    from cli_helpers import REPO

    root = copy_root(tmp_path)
    source = root / "src" / "passprice"
    shutil.copytree(REPO / "src" / "passprice", source, ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    serving = source / "serving.py"
    text = serving.read_text(encoding="utf-8")
    assert "SOFTMAX_MACS_PER_SCORE = 7.5" in text
    serving.write_text(text.replace("SOFTMAX_MACS_PER_SCORE = 7.5", "SOFTMAX_MACS_PER_SCORE = 8.5"), encoding="utf-8")
    outside = tmp_path / "mine.lock.toml"
    result = invoke("lock", "gemma3-270m-h100", "-o", str(outside), root=root)
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("passprice: warning: this checkout's src/passprice prices with pricing model ")
    # 11,733.7 before session 39's window rule (window55)
    assert result.stdout.startswith("locked mine (price, locks serving gemma3-270m-h100): 11,734.4 tokens/s")
    assert outside.is_file()
    inside = root / "locks" / "mine.lock.toml"
    result = invoke("lock", "gemma3-270m-h100", "-o", str(inside), root=root)
    assert result.exit_code == 2 and not inside.exists()
    assert result.stderr.startswith(f"passprice: error: {source}: this checkout's code prices with pricing model ")


# --- (c) compare --cards all with a broken card among good ones -------------------------------------------------------


def test_compare_all_with_one_broken_card_still_compares_the_good_ones(tmp_path: Path) -> None:
    """One card file that is not TOML in facts/cards/ made ``compare SERVING`` (``--cards all``) print only that
    card's error (exit 2) and compare none of the 17 good cards: the listing class of issue 13 (``cards`` shows the
    good ones, then the bad one's line). Now the good cards are compared and the bad one is its error line, exit 2."""
    root = copy_root(tmp_path)
    broken = root / "facts" / "cards" / "zz_broken.toml"
    broken.write_text("garbage = [\n", encoding="utf-8")
    result = invoke("compare", "gemma3-270m-h100", "--json", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr == (f"passprice: error: {broken.relative_to(root).as_posix()}: not valid TOML: Invalid value "
                             "(at end of document: line 2, column 1)\n")
    rows = json.loads(result.stdout)["cards"]
    assert len(rows) == 17 and "zz_broken" not in {row["card"] for row in rows}
    assert rows[0]["card"] == "b200" and rows[0]["batch"] == 7873


# --- (d) compare refused on every card, by different refusals --------------------------------------------------------


def test_compare_refused_on_every_card_names_each_refusal() -> None:
    """``compare deepseek-v3-h200 --host-memory`` is refused on all 17 cards: NoHostLink on the 10 without a host
    link, NotResident on the 7 with one. The refusal line said "NoHostLink … (on a100_pcie_80gb; the others
    likewise)", hiding that seven cards have the link and still cannot hold the model. It names each refusal with
    its cards now."""
    result = invoke("compare", "deepseek-v3-h200", "--host-memory", "--json")
    assert result.exit_code == 1
    assert result.stderr == (
        "passprice: refused: no card of the 17 compared prices it: NoHostLink: card 'a100_pcie_80gb' has no host link "
        "(host.* facts): price it without --host-memory (on a100_pcie_80gb; 9 others likewise); refused otherwise: "
        "NotResident on 7 cards (a100_sxm4_80gb, b200, h100_sxm5_80gb +4 more)\n"
    )
    rows = json.loads(result.stdout)["cards"]
    assert [r["refusal"] for r in rows].count("NotResident") == 7
    one = invoke("compare", "deepseek-v3-h200", "--host-memory", "--cards", "a100_pcie_80gb,b200")
    assert one.exit_code == 1
    assert one.stderr.rstrip().endswith("(on a100_pcie_80gb); refused otherwise: NotResident on 1 card (b200)")


# --- (e) compare of a serving whose file names no card ---------------------------------------------------------------


def test_compare_of_a_serving_whose_card_names_nothing_is_bad_input(tmp_path: Path) -> None:
    """A serving file with ``card = "nope"`` was compared (exit 0) and the table closed with "the serving's locks
    lock nope", though its lock locks h100_sxm5_80gb and ``price``/``check`` refuse the file. It is bad input now,
    one line naming the file and key, as ``price`` words it."""
    from cli_helpers import bad

    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / "gemma3-270m-h100.toml"
    text = serving.read_text(encoding="utf-8")
    assert text.count('card = "h100_sxm5_80gb"') == 1
    serving.write_text(text.replace('card = "h100_sxm5_80gb"', 'card = "nope"'), encoding="utf-8")
    # the folder relative to the registry since session 29 (left29), as every registry file is named
    said = ("registry/servings/gemma3-270m-h100.toml: card: card 'nope': not found in facts/cards (registered: "
            "a100_pcie_80gb, ")
    assert bad("compare", "gemma3-270m-h100", "--cards", "h100_sxm5_80gb", root=root, says=said)[0].startswith(
        f"passprice: error: {said}"
    )
    assert bad("price", "gemma3-270m-h100", root=root, says=said)


# --- (f) --max-tpot given to audit SERVING and to a price lock -------------------------------------------------------

CAP_UNUSED = (
    "passprice: warning: --max-tpot bounds the best batch's search (best, lock --best); it does not change this "
)


def test_max_tpot_on_audit_and_on_a_price_lock_says_it_changes_nothing(tmp_path: Path) -> None:
    """``audit r1-qwen7b-h200 --max-tpot 0.001`` audited batch 1 (1.004 ms a token, over the cap) and said nothing
    of the cap; ``lock r1-qwen7b-h200 --max-tpot 0.001 -o FILE`` wrote a price lock at batch 1 recording the cap,
    exit 0, not a word (max-batch and speculate warn: the cap bounds the best batch's search only). Both warn now;
    ``lock --best`` (which searches within the cap) does not."""
    audited = invoke("audit", "r1-qwen7b-h200", "--max-tpot", "0.001")
    assert audited.exit_code == 0
    assert audited.stderr == CAP_UNUSED + "result: audit prices the serving's batch, as price does\n"
    locked = invoke("lock", "r1-qwen7b-h200", "--max-tpot", "0.001", "-o", str(tmp_path / "p.lock.toml"))
    assert locked.exit_code == 0 and locked.stdout.startswith("locked p (price, locks no registered serving): 996.1")
    # session 33 (left35): a lock written outside the registry is said to be unread by its check
    unread = ("passprice: note: lock {} was written to {}, outside registry {}: its check, price and diff read "
              "{}/locks/ only and will not see it (without -o, lock writes {}/locks/{}.lock.toml)\n")
    assert locked.stderr == CAP_UNUSED + (
        "result: a price lock records the price at the serving's batch, whatever its TPOT (lock --best records the "
        "best batch within the cap)\n"
    ) + unread.format("p", tmp_path / "p.lock.toml", REPO, REPO, REPO, "p")
    best = invoke("lock", "r1-qwen7b-h200", "--best", "--max-tpot", "0.01", "-o", str(tmp_path / "b.lock.toml"))
    assert best.exit_code == 0 and "at batch 318" in best.stdout
    assert best.stderr == unread.format("b", tmp_path / "b.lock.toml", REPO, REPO, REPO, "b")


# --- (g) an MTP checkpoint whose every block is a draft block --------------------------------------------------------


def test_as_many_draft_layers_as_blocks_is_bad_input(tmp_path: Path) -> None:
    """``qwen35.nextn_predict_layers = 65`` with ``block_count = 65`` made every block a draft (MTP) block: kv said
    "weights 1.043 GB … without the 15.45 GB draft (MTP) block" and ``price`` priced a main model of no block
    (exit 0); 66 was refused as "more than block_count". As many is refused now, naming the entry and key."""
    from cli_helpers import bad

    root = copy_root(tmp_path)
    entry = root / "registry" / "checkpoints" / "qwen35-27b-like.toml"
    text = entry.read_text(encoding="utf-8")
    said = '"qwen35.nextn_predict_layers" = { type = "uint32", value = 1 }'
    assert text.count(said) == 1 and '"qwen35.block_count" = { type = "uint32", value = 65 }' in text
    entry.write_text(text.replace(said, said.replace("value = 1", "value = 65")), encoding="utf-8")
    line = (f"{entry}: metadata qwen35.nextn_predict_layers: 65 draft layers, as many as block_count (65): the main "
            "model would have no block")
    assert bad("price", "qwen35-27b-h200-mtp", "--no-lock", root=root, says=line) == [f"passprice: error: {line}"]
    assert bad("kv", "qwen35-27b-like", root=root, says=line) == [f"passprice: error: {line}"]


def test_checkpoints_lists_a_contradicting_header_as_its_error_line(tmp_path: Path) -> None:
    """``checkpoints`` listed an entry whose header ``check`` and every price refuse (``nextn_predict_layers`` 66 of
    65 blocks), exit 0, with "15.45 GB draft (MTP) block … 1.758 GB without drafts" read off it. It lists the good
    entries and reports that one on its error line, exit 2, as ``cards`` does a bad card."""
    root = copy_root(tmp_path)
    entry = root / "registry" / "checkpoints" / "qwen35-27b-like.toml"
    text = entry.read_text(encoding="utf-8")
    said = '"qwen35.nextn_predict_layers" = { type = "uint32", value = 1 }'
    entry.write_text(text.replace(said, said.replace("value = 1", "value = 66")), encoding="utf-8")
    result = invoke("checkpoints", root=root)
    assert result.exit_code == 2
    assert result.stderr == (
        "passprice: error: registry/checkpoints/qwen35-27b-like.toml: metadata qwen35.nextn_predict_layers: 66 draft "
        "layers, more than block_count "
        "(65): the main model would have no block\n"
    )
    assert "qwen35-27b-like" not in result.stdout and "gemma3-270m-q4_k_m " in result.stdout


# --- (h) sweep --max-tpot's cells made on arrays ----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_the_capped_text_of_long_segments_is_the_row_at_a_time_text(fmt: str) -> None:
    """``sweep --cards all --batches 1-3900 --max-tpot 0.01 -o FILE`` (994,500 rows) ran 2.08-2.22 s (1.3 s without
    the cap): each row's two cells were an f-string with the TPOT's ``repr``, 1.1 s a million rows. They are made
    from arrays now (1.37-2.03 s, the same load; JSON likewise). Segments past floattext.FEW rows (its fast path),
    with refused rows among them (batch 0, and past what fits) and a drafting serving, give the reference text byte
    for byte."""
    from cli_helpers import REPO
    from passprice.registry import Root
    from passprice.sweep import Grid, Sweeper
    from passprice.sweepcap import capped_chunks, reference_chunks

    sweeper = Sweeper(Root(REPO))
    grid = Grid(servings=("r1-qwen7b-h200", "qwen35-27b-h200-mtp"), batches=(0, *range(1, 40), 5000, 100000),
                cards=("h200_sxm_141gb", "rtx_3090"), positions=(512.0,))
    fast = "".join(capped_chunks(sweeper.segments(grid), fmt, 0.005))
    assert fast == "".join(reference_chunks(sweeper.segments(grid), fmt, 0.005))
    if fmt == "csv":
        lines = fast.splitlines()
        assert len(lines) == 1 + 2 * 2 * 42
        assert {line.rsplit(",", 1)[1] for line in lines[1:]} == {"true", "false", ""}
    else:
        assert {row["within_max_tpot"] for row in json.loads(fast)} == {True, False, None}


# --- (i) a name holding "$" in a picture ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["d$x^{$", "c$x^{2}_{1}$"])
def test_a_serving_name_holding_dollars_is_drawn_as_written(tmp_path: Path, name: str) -> None:
    """A serving registered as ``d$\\nosuchcommand$`` (check: "all holds") made ``sweep NAME --plot`` print
    matplotlib's mathtext traceback ("ParseFatalException: Unknown symbol: \\nosuchcommand") and write no picture;
    ``c$\\frac{1}{0}$`` was drawn as a fraction. Titles, legend entries and annotations are drawn as written now
    (tick labels keep mathtext): the picture is written, exit 0, for sweep (with and without --max-tpot), roofline
    and audit. Since session 26 a backslash is a character ``check`` refuses in a registry file's name (no file name
    on Windows holds it: tests/test_leftovers_26.py), so the names are mathtext that fails to parse (``d$x^{$``) and
    mathtext that would draw a superscript and a subscript (``c$x^{2}_{1}$``), neither holding one."""
    pytest.importorskip("matplotlib")
    root = copy_root(tmp_path)
    servings = root / "registry" / "servings"
    (servings / f"{name}.toml").write_bytes((servings / "r1-qwen7b-h200.toml").read_bytes())
    for i, args in enumerate([("sweep", name, "--batches", "1,2,4"), ("sweep", name, "--batches", "1,2,4",
                                                                       "--max-tpot", "0.01"),
                              ("roofline", "h200_sxm_141gb", name), ("audit", name)]):
        picture = tmp_path / f"p{i}.png"
        result = invoke(*args, "--plot", str(picture), root=root)
        assert result.exit_code == 0, result.output
        assert picture.read_bytes().startswith(b"\x89PNG")


# --- (j) an exception no command catches ----------------------------------------------------------------------------


def test_an_uncaught_exception_exits_1_not_0(tmp_path: Path) -> None:
    """The console script ended every process through its last exit handler (``entry._end``, ``os._exit`` with the
    command's status), which knew only ``SystemExit``: an exception passprice did not catch (the mathtext one of
    (i)) printed its traceback and exited 0, a crash a script took for success. It exits 1, as Python does."""
    import os
    import subprocess
    import sys

    code = (
        "import passprice.memo as m\n"
        "def boom(command_line):\n"
        "    raise RuntimeError('boom')\n"
        "m.main = boom\n"
        "import sys\n"
        "sys.argv = ['passprice', 'check']\n"
        "from passprice.entry import main\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONUTF8": "1"}
    done = subprocess.run([sys.executable, "-X", "utf8", "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == "RuntimeError: boom"


# --- (k) GitHub's math in free text of the review --------------------------------------------------------------------


def test_markdown_free_text_never_renders_as_math() -> None:
    """A note or locator holding ``$x^2$`` (or ``$$…$$``) was passed to the pull-request comment as it is, and GitHub
    renders ``$…$`` as LaTeX math: the text shown was not the text written. Each ``$`` is escaped now."""
    from passprice.tables import markdown_text

    assert markdown_text("about $x^2$, $$\\frac{a}{b}$$ and $5") == r"about \$x^2\$, \$\$\\frac{a}{b}\$\$ and \$5"


# --- (l) a record named like an option ------------------------------------------------------------------------------


def test_a_serving_named_like_an_option_is_refused_by_name(tmp_path: Path) -> None:
    """A serving file ``registry/servings/-x.toml`` was listed by ``servings`` and passed ``check`` ("all holds"),
    while ``passprice price -x`` (and each ``passprice lock -x -o …`` the review advises) said "No such option:
    -x". Its name is refused where every record's name is read (registry.entry_name), one line naming the file."""
    root = copy_root(tmp_path)
    servings = root / "registry" / "servings"
    (servings / "-x.toml").write_bytes((servings / "gpt-oss-20b-h200.toml").read_bytes())
    why = ("the name -x starts with '-', which a command line reads as an option (`passprice price -x` says no such "
           "option, as does every command passprice advises with it); rename the file")
    listed = invoke("servings", root=root)
    assert listed.exit_code == 2 and listed.stderr == f"passprice: error: registry/servings/-x.toml: {why}\n"
    assert "gpt-oss-20b-h200 " in listed.stdout
    checked = invoke("check", root=root)
    assert checked.exit_code == 2
    assert checked.stderr == f"passprice: error: registry/servings/-x.toml: {why}\n"


def test_a_tpot_cap_below_a_microsecond_is_out_of_range(tmp_path: Path) -> None:
    """Round 17, found and left: `max_tpot = 5e-324` (the schema's exclusiveMinimum 0) was accepted and shown as a
    cap of "4.941e-315 ns". A cap is now at least 1 µs, in a serving file, a lock and `--max-tpot`."""
    from cli_helpers import bad, copy_root

    [line] = bad("best", "r1-qwen7b-h200", "--max-tpot", "5e-324")
    assert "Invalid value for '--max-tpot': 5e-324 is out of range (a finite number from 1e-06 to 3,600)" in line
    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / "r1-qwen7b-h200.toml"
    text = serving.read_text(encoding="utf-8")
    at = text.index("\n[") + 1  # a top-level key, before the first table
    serving.write_text(text[:at] + "max_tpot = 5e-324\n" + text[at:], encoding="utf-8")
    [line] = bad("best", "r1-qwen7b-h200", root=root)
    assert line.startswith(f"passprice: error: {serving}: max_tpot: 5e-324 is less than the minimum of 1e-06")


def test_an_empty_checkpoint_or_card_name_is_named() -> None:
    """Round 17, found and left: `price --checkpoint '' --card C` said "give a SERVING, or both --checkpoint and
    --card", as if none was given."""
    from cli_helpers import bad

    [line] = bad("price", "--checkpoint", "", "--card", "h200_sxm_141gb")
    assert "Invalid value for --checkpoint: an empty name: give a registry name or a file" in line
