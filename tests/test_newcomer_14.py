"""What session 13's README-only walkthrough tripped on, each kept as a test."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli_helpers import bad, copy_root, invoke

R1 = "r1-qwen7b-h200"
ENTRY = "deepseek-r1-distill-qwen-7b-q4_k_m"


def test_reproduce_says_a_removed_serving_even_when_todays_checkpoint_does_not_read(tmp_path: Path) -> None:
    # A registry without the lock's serving and checkpoint entry (`passprice init demo`, then reproduce a shipped
    # lock by path): "serving unchanged" was printed for a serving that is not registered, and the checkpoint's
    # ~600-character explanation three times.
    root = copy_root(tmp_path)
    (root / "registry" / "servings" / f"{R1}.toml").unlink()
    (root / "registry" / "checkpoints" / f"{ENTRY}.toml").unlink()
    result = invoke("reproduce", f"locks/{R1}.lock.toml", root=root)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert "    facts          not compared: today's checkpoint does not read (below)" in lines
    assert f"    serving        serving {R1} is not registered here (priced as the lock embeds it)" in lines
    # walkthrough 21: said once, on the checkpoint line, without the registry's listing of names
    assert result.stdout.count(f"{ENTRY}: no entry of that name") == 1
    assert "not found in registry/checkpoints" not in result.stdout
    report = json.loads(invoke("reproduce", f"locks/{R1}.lock.toml", "--json", root=root).stdout)
    assert report["serving_changed"] == [
        f"serving {R1} is not registered here (priced as the lock embeds it)"
    ], report


def test_reproduce_says_not_compared_for_a_serving_it_could_not_read(tmp_path: Path) -> None:
    # The serving is still registered, but today's checkpoint does not read: nothing of today's serving was compared.
    root = copy_root(tmp_path)
    (root / "registry" / "checkpoints" / f"{ENTRY}.toml").unlink()
    result = invoke("reproduce", f"locks/{R1}.lock.toml", root=root)
    assert result.exit_code == 1, result.output
    assert "    serving        not compared (today's files do not read)" in result.stdout.splitlines()


def test_a_branch_only_on_origin_is_pointed_to(tmp_path: Path) -> None:
    # `passprice diff main HEAD` in a fresh clone on a feature branch: no local main, and no hint of origin/main.
    upstream = tmp_path / "up"
    copy_root(tmp_path).rename(upstream)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "registry"]):
        subprocess.run([*git, *args], cwd=upstream, check=True, capture_output=True)
    clone = tmp_path / "clone"
    subprocess.run([*git, "clone", "-q", str(upstream), str(clone)], check=True, capture_output=True)
    subprocess.run([*git, "checkout", "-q", "-b", "feat"], cwd=clone, check=True, capture_output=True)
    subprocess.run([*git, "branch", "-q", "-D", "main"], cwd=clone, check=True, capture_output=True)
    assert bad("diff", "main", "HEAD", root=clone) == [
        f"passprice: error: main: neither a folder nor a revision of the git checkout at {clone}; origin/main is a "
        "revision here: diff origin/main …"
    ]
    assert invoke("diff", "origin/main", "HEAD", root=clone).exit_code == 0


def test_fact_set_names_every_missing_option_at_once(tmp_path: Path) -> None:
    # `fact set CARD streams.read --value 0.9` said "Missing option '--unit'", then '--provenance', then '--source',
    # then '--locator': four tries to learn what one line can say.
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = card.read_bytes()
    [line] = bad("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.9", root=root)
    assert line.startswith("passprice: error: Missing options '--unit', '--provenance', '--source', '--locator'. (see ")
    [line] = bad("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.9", "--unit", "1", "--provenance",
                 "measured", "--source", "passprice-card-review", root=root)
    assert line.startswith("passprice: error: Missing option '--locator'. (see ")
    assert card.read_bytes() == before


def test_a_refused_simulation_says_about_how_much_work_it_needs() -> None:
    # The README's `--chunk 512` variant of its synthetic example, under --max-work 20000 (it was refused under the
    # default budget before planning backed off its losing tries: 372,000 units then, 23,661 now), and the line said
    # only "raise --max-work" (the walkthrough bisected). Static spent 3,507 units; the continuous run served 750 of
    # 1,000 requests in 16,506: 3,507 + 16,506 × 1,000 / 750 = 25,515 → 26,000.
    args = ("simulate", "r1-qwen7b-h200", "--synthetic", "1000", "--seed", "7", "--rate", "200", "--chunk", "512")
    [line] = bad(*args, "--max-work", "20000")
    assert line.endswith(
        "or raise --max-work (at its pace so far, 750 of 1,000 requests in 16,506 units, this run would end near "
        "26,000 units of --max-work, counting the runs before it)"
    ), line
    assert invoke(*args, "--max-work", "26000").exit_code == 0  # the figure it names suffices
    assert invoke(*args).exit_code == 0  # and the default budget now holds the whole run
