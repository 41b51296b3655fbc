"""Attack round 10 (issue 13) on the main of round 9's fixes: each test builds the input that broke it and asserts
what passprice now does with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

# --- a registered serving named by a path is under its locks ------------------------------------------------------


def _bandwidth_assumed(root: Path) -> None:
    """The H200's memory.bandwidth made an assumption, below the published floor of lock r1-qwen7b-h200."""
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    old = 'value = 4.8\nunit = "TB/s"\nprovenance = "published"\n'
    assert old in text
    card.write_text(text.replace(old, 'value = 4.8\nunit = "TB/s"\nprovenance = "assumed"\n', 1), encoding="utf-8")


@pytest.mark.parametrize("ref", ["./r1-qwen7b-h200", "../servings/r1-qwen7b-h200", "link"])
def test_a_registered_serving_named_by_a_path_is_priced_under_its_lock(tmp_path: Path, ref: str) -> None:
    """``price ./r1-qwen7b-h200`` (or ``../servings/r1-qwen7b-h200``) reads the registered serving's file, but the
    lock guard took a name holding ``/`` for a serving kept elsewhere: with the H200's bandwidth made an assumption
    below the lock's published floor, ``price r1-qwen7b-h200`` was refused LockFloor and ``price ./r1-qwen7b-h200``
    priced it, exit 0, 'not a registered serving: no lock applies'. So was a link kept elsewhere to the registered
    file (it was taken for a serving named after the link)."""
    root = copy_root(tmp_path)
    _bandwidth_assumed(root)
    if ref == "link":
        ref = str(tmp_path / "elsewhere.toml")
        Path(ref).symlink_to(root / "registry" / "servings" / "r1-qwen7b-h200.toml")
    result = invoke("price", ref, "--json", root=root)
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    assert out["refusal"] == "LockFloor" and out["locks"][0].startswith("r1-qwen7b-h200"), out
    assert result.stderr.startswith(
        "passprice: refused: LockFloor: lock r1-qwen7b-h200 refuses this price: memory.bandwidth is assumed, below "
        "the floor published (the price's weakest provenance is assumed, carried by memory.bandwidth)"
    ) and len(result.stderr.splitlines()) == 1


# --- fact show --history: texts of old versions and of commits ----------------------------------------------------


def test_history_shows_no_bidi_control_or_line_break_of_an_old_version_or_commit(tmp_path: Path) -> None:
    """``fact show --history`` reads each old version as it was committed (never held to today's schema) and printed
    its locator raw: a locator ``ev\\u202eil\\nline2 \\x1b[31m`` split the version's block in two, reordered the line
    and sent ESC to the terminal; an author or subject holding U+202E was printed raw too (only C0 controls were
    replaced). The locator is now shown escaped, the author and subject with U+FFFD."""
    import subprocess

    def git(*args: str, name: str = "t") -> None:
        subprocess.run(["git", "-c", f"user.name={name}", "-c", "user.email=t@example.com", *args], cwd=root,
                       check=True, capture_output=True)  # fmt: skip

    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "the registry")
    locator = ("locator = \"Specifications table, H200 SXM column (a row: its label, "
               "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'\"")
    assert locator in text
    card.write_text(text.replace(locator, 'locator = "ev\\u202eil\\nline2 \\u001b[31m red"', 1), encoding="utf-8")
    git("commit", "-qam", "sub\u202eject", name="ev\u202eil")
    card.write_text(text, encoding="utf-8")
    git("commit", "-qam", "fixed")
    result = invoke("fact", "show", "h200_sxm_141gb", "memory.bandwidth", "--history", root=root)
    assert result.exit_code == 0, result.output
    assert "\u202e" not in result.stdout and "\x1b" not in result.stdout
    assert "  ev\ufffdil  sub\ufffdject\n" in result.stdout
    assert "  source: nvidia-h200-product-page — ev\\u202eil\\nline2 \\x1b[31m red\n" in result.stdout
    assert len(result.stdout.split("\n\n")) == 4  # the heading and three versions, one block each


# --- calibrate: a measurement file of many runs -------------------------------------------------------------------


def test_a_fits_objective_is_every_runs_prediction_to_the_bit() -> None:
    """calibrate evaluated each fit's objective run by run in Python (:func:`passprice.calibrate._predict`, 536,000
    calls for a 240 KB measurement file of 1,000 runs: 8.6 s of 17 s); it is now one array expression
    (``_predicted``), which must give every run's prediction as the same double, or a fit would choose other
    values: checked on 400 runs whose components span nine decades, at every serial share of the grid."""
    import random

    import numpy as np

    from passprice import calibrate as c

    rng = random.Random(10)
    comp = np.array([[rng.random() * 10.0 ** rng.randint(-9, 0) for _ in c.SHARES] for _ in range(400)])
    layers = np.array([float(rng.randint(1, 128)) for _ in range(400)])
    for serial in c.SERIAL_GRID:
        values = {p: rng.uniform(0.05, 1.0) for p in c.SHARES if rng.random() < 0.7}
        values |= {"overhead.pass": rng.random() * 1e-4, "overhead.layer": rng.random() * 1e-6}
        one_by_one = [
            c._predict(c.RunModel(None, layers[i], 1.0, 1.0, comp[i]), values, serial)  # type: ignore[arg-type]
            for i in range(len(comp))
        ]
        assert c._predicted(comp, layers, values, serial).tolist() == one_by_one


# --- a name a registry file gives that holds a NUL or a bidi control ----------------------------------------------

_ONE_LINE = "holds a control character, a line separator, a bidi control or an invisible character (a newline, a " \
    "tab, U+2028, U+202E, U+200B …): write it on one line"


def _replaced(file: Path, old: str, new: str) -> None:
    text = file.read_text(encoding="utf-8")
    assert old in text
    file.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(("key", "old", "new", "shown"), [
    ("card", 'card = "h200_sxm_141gb"', 'card = "a\\u0000b"', "'a\\x00b'"),
    ("checkpoint", 'checkpoint = "deepseek-r1-distill-qwen-7b-q4_k_m"', 'checkpoint = "a\\u0000b.gguf"',
     "'a\\x00b.gguf'"),
    ("card", 'card = "h200_sxm_141gb"', 'card = "h200\\u202e"', "'h200\\u202e'"),
])
def test_a_serving_file_naming_a_record_by_a_text_that_does_not_print_names_the_file_and_key(
    tmp_path: Path, key: str, old: str, new: str, shown: str
) -> None:
    """The serving schema held ``card``, ``checkpoint``, ``draft.method`` and ``routing`` to no one-line rule: a
    serving file with ``card = "a\\u0000b"`` failed ``price`` and ``check`` with ``'…/facts/cards/a\\x00b.toml': not a
    file name (it holds a NUL character)``, naming neither the serving file nor its key (in a registry of many
    servings, no way to find it), and ``"h200\\u202e"`` was looked up as a name. The schema now refuses each by the
    one-line rule, naming the file and key."""
    from cli_helpers import bad

    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / "r1-qwen7b-h200.toml"
    _replaced(serving, old, new)
    bad("price", "r1-qwen7b-h200", root=root, says=f"{serving}: {key}: {shown} {_ONE_LINE}")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert f"passprice: error: registry/servings/r1-qwen7b-h200.toml: {key}: {shown} {_ONE_LINE}\n" in result.stderr


def test_a_sweep_file_or_a_measured_run_naming_a_record_by_a_nul_names_the_file_and_key(tmp_path: Path) -> None:
    """As for a serving file: a sweep file's ``servings`` item and a measured run's ``card`` holding a NUL were
    reported by the file name they made (``'…/registry/servings/a\\x00b.toml': not a file name``), not by the file
    and key that gave them."""
    from cli_helpers import bad

    root = copy_root(tmp_path)
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('servings = ["r1-qwen7b-h200", "a\\u0000b"]\nbatches = [1]\npositions = [5]\n', encoding="utf-8")
    bad("sweep", "--file", str(sweep), "-o", str(tmp_path / "out.csv"), root=root,
        says=f"{sweep}: servings.1: 'a\\x00b' {_ONE_LINE}")
    assert not (tmp_path / "out.csv").exists()
    _replaced(root / "registry" / "measurements" / "llamacpp-points.toml", 'card = "h100_pcie_80gb"',
              'card = "h100\\u0000pcie"')
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"passprice: error: registry/measurements/llamacpp-points.toml: run.0.card: 'h100\\x00pcie' {_ONE_LINE}\n")


# --- the closest-name hint among names its bound ties -------------------------------------------------------------


def test_the_hint_names_the_closest_of_many_names_the_bound_ties(tmp_path: Path) -> None:
    """Round 9 scored in full only the 40 names with the highest ``quick_ratio`` (the characters shared in any
    order), so among names of the same characters (every order of the digits 1 to 6) the 40 scored were the last in
    sort order, and ``price s123456y`` hinted ``did you mean s651234x?`` though ``s123456x`` is one letter away
    (difflib's own get_close_matches gives it first). The names the bound ties are now ranked by the characters
    they share in place."""
    import itertools

    from cli_helpers import bad

    root = copy_root(tmp_path)
    for digits in itertools.permutations("123456"):
        (root / "registry" / "servings" / f"s{''.join(digits)}x.toml").write_text("x = 1\n", encoding="utf-8")
    lines = bad("price", "s123456y", root=root, says="serving 's123456y': not found in ")
    assert "not found in registry/servings; did you mean s123456x or " in lines[0], lines[0][:200]


# --- a serving file whose shared prefix it cannot hold --------------------------------------------------------------


def test_new_serving_writes_no_shared_prefix_a_file_cannot_hold(tmp_path: Path) -> None:
    """``new-serving n r1-qwen7b-h200 --shared-prefix 4096`` wrote a serving file with no ``kv_page`` (exit 0, 'price
    it with passprice price n'); ``price n`` was then refused ``BadPrefix`` (exit 1, naming neither the file nor the
    key) and ``check`` passed it. A shared prefix needs the file's paged cache, and no class of the file may stop short
    of it: bad input naming the file and key, read or written."""
    from cli_helpers import bad

    root = copy_root(tmp_path)
    servings = root / "registry" / "servings"
    bad("new-serving", "n", "r1-qwen7b-h200", "--shared-prefix", "4096", root=root,
        says=f"{servings / 'n.toml'}: shared_prefix: 4096 positions shared need a paged KV cache (a contiguous cache "
        "shares no page): give kv_page, or remove shared_prefix (nothing written)")
    bad("new-serving", "n", "r1-qwen7b-h200", "--shared-prefix", "4000", "--kv-page", "16", root=root,
        says=f"{servings / 'n.toml'}: contexts.0.position: 2048 stops short of the shared prefix (shared_prefix "
        "4000): every sequence holds the whole prefix (nothing written)")
    assert not (servings / "n.toml").exists()
    text = (servings / "r1-qwen7b-h200.toml").read_text(encoding="utf-8")
    (servings / "n.toml").write_text(text.replace("host_memory = false\n", "host_memory = false\nshared_prefix = 16\n"),
                                     encoding="utf-8")
    bad("price", "n", root=root,
        says=f"{servings / 'n.toml'}: shared_prefix: 16 positions shared need a paged KV cache")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert "passprice: error: registry/servings/n.toml: shared_prefix: 16 positions shared need a paged KV cache" in \
        result.stderr


# --- a lock written inside the registry where no command reads it -------------------------------------------------


@pytest.mark.parametrize("place", ["locks/x.lock", "registry/servings/y.lock.toml", "locks/.lock.toml"])
def test_a_lock_written_inside_the_registry_where_no_command_reads_it_is_refused(tmp_path: Path, place: str) -> None:
    """``lock r1-qwen7b-h200 --force -o locks/x.lock`` printed ``locked r1-qwen7b-h200 …`` and wrote a lock into the
    registry that ``check``, ``price`` and ``diff`` never read (they read ``locks/NAME.lock.toml``): its floors
    guarded nothing, without a word. Refused now, before anything is priced; a lock outside the registry is the
    user's own and still written."""
    from cli_helpers import bad

    root = copy_root(tmp_path)
    output = root / place
    if place.startswith("locks/"):  # in locks/, the name is the fault: said so (walk95)
        says = (f"{output}: locks are read from {root / 'locks'}/NAME.lock.toml only, and this name does not end in "
                ".lock.toml: a lock written so would guard nothing (check, price and diff never read it); name it "
                "NAME.lock.toml")
    else:
        says = (f"{output}: inside the registry, locks are read from {root / 'locks'}/NAME.lock.toml only: a lock "
                "written here would guard nothing (check, price and diff never read it); write it there (the "
                "default), or outside the registry")
    assert bad("lock", "r1-qwen7b-h200", "--force", "-o", str(output), root=root, says=says) == [
        f"passprice: error: {says}"]
    assert not output.exists()
    outside = tmp_path / "mine.lock.toml"
    result = invoke("lock", "r1-qwen7b-h200", "-o", str(outside), root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("locked mine (price, locks serving r1-qwen7b-h200): 996.1 tokens/s")


# --- a registry file that is a link to a file outside the registry ------------------------------------------------


def test_a_record_file_linked_outside_the_registry_is_not_read_or_quoted(tmp_path: Path) -> None:
    """A pull request adding ``facts/cards/x.toml`` as a symbolic link to a TOML file of the CI machine made
    ``check`` (and ``diff --format comment``, in the PR comment) read it and quote its values in their error lines:
    ``facts/cards/x.toml: memory.bandwidth.value: 'hunter2-password' is not of type 'number'`` — what a name inside a
    registry file naming a path outside it may not do. Such a link is refused unread; a link to a file inside the
    registry still reads."""
    from cli_helpers import bad

    root = copy_root(tmp_path)
    secret = tmp_path / "secret.toml"
    secret.write_text('[card]\nname = "x"\n[memory.bandwidth]\nvalue = "hunter2-password"\nunit = "TB/s"\n',
                      encoding="utf-8")
    link = root / "facts" / "cards" / "x.toml"
    link.symlink_to(secret)
    result = invoke("check", root=root)
    assert result.exit_code == 2 and "hunter2" not in result.output
    line = (f"x.toml: a symbolic link to {secret}, outside the registry ({root}): a registry's files lie inside it "
            "(copy the file in, or link to one inside)")
    assert f"passprice: error: facts/cards/{line}\n" in result.stderr
    bad("fact", "show", "x", root=root, says=f"{root}/facts/cards/{line}")
    link.unlink()
    link.symlink_to(root / "facts" / "cards" / "h200_sxm_141gb.toml")
    shown = invoke("fact", "show", "x", "memory.bandwidth", root=root)
    assert shown.exit_code == 0 and "4.8 TB/s" in shown.stdout, shown.output
