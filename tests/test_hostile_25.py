"""Round 25 of hostile input (#13): outputs written through a symbolic link onto a record of the registry.

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli_helpers import REPO, bad, copy_root, invoke

R1 = "r1-qwen7b-h200"
CONFIG = str(REPO / "examples" / "configs" / "meta-llama-3-8b.json")


def _record_line(link: Path, end: Path, option: str, root: Path) -> str:
    return (f"passprice: error: {link} (a link to {end}): {option} would write into {root / 'registry'}/, where every "
            ".toml file is a record passprice reads (this output is none): write it outside the registry's record "
            "folders, or under another suffix")


@pytest.mark.parametrize(
    ("name", "option", "command"),
    [
        ("out.csv", "-o", ("sweep", R1)),
        ("out.json", "-o", ("sweep", R1)),
        ("p.svg", "--plot", ("sweep", R1)),
        ("s.txt", "-o", ("simulate", R1, "--synthetic", "3")),
        ("p.svg", "--plot", ("simulate", R1, "--synthetic", "3")),
        ("h.gguf", "-o", ("synth", CONFIG)),
        ("p.png", "--plot", ("roofline", "h200_sxm_141gb", R1)),
        ("p.png", "--plot", ("audit", R1)),
        ("p.png", "--plot", ("validate",)),
    ],
)
def test_an_output_linked_to_a_record_is_refused(tmp_path: Path, name: str, option: str,
                                                 command: tuple[str, ...]) -> None:
    # Round 25: `sweep R1 -o out.csv --force`, out.csv a link to registry/servings/R1.toml, replaced the serving with
    # the CSV through the link, exit 0 (the refusal looked at the suffix of the name given, not of the file written);
    # --plot (a .png or .svg name) likewise, and validate's and audit's --plot were never checked at all.
    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / f"{R1}.toml"
    before = serving.read_bytes()
    link = tmp_path / name
    link.symlink_to(serving)
    args = [*command, option, str(link), "--force"]
    if option == "--plot" and command[0] in ("sweep", "simulate"):
        args += ["-o", str(tmp_path / "other.txt")]
    assert bad(*args, root=root) == [_record_line(link, serving, option, root)]
    assert serving.read_bytes() == before and link.is_symlink()
    assert not (tmp_path / "other.txt").exists()
    assert invoke("check", root=root).exit_code == 0


def test_a_lock_linked_from_locks_onto_a_serving_is_refused(tmp_path: Path) -> None:
    # Round 25: `lock R1 -o locks/evil.lock.toml --force`, that name a link to registry/servings/R1.toml, printed
    # "locked evil … -> locks/evil.lock.toml", exit 0, and the serving file held the lock (check then failed on it):
    # the place was judged by the link's folder and name, not by where the write lands.
    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / f"{R1}.toml"
    before = serving.read_bytes()
    link = root / "locks" / "evil.lock.toml"
    link.symlink_to(serving)
    for force in ((), ("--force",)):
        lines = bad("lock", R1, "-o", str(link), *force, root=root)
        assert lines == [
            f"passprice: error: {link}: inside the registry, locks are read from {root / 'locks'}/NAME.lock.toml only: "
            "a lock written here would guard nothing (check, price and diff never read it); write it there (the "
            "default), or outside the registry"
        ] or "already exists" in lines[0]
    assert serving.read_bytes() == before and link.is_symlink()
    # A link in locks/ to another lock there is that lock: written through the link, as before.
    link.unlink()
    other = root / "locks" / "mine.lock.toml"
    link.symlink_to(other.name)
    assert invoke("lock", R1, "-o", str(link), "--force", root=root).exit_code == 0
    assert link.is_symlink() and other.is_file()


def test_a_name_ending_in_a_newline_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    # Round 25: `lock R1 --name $'evil\n'` printed "locked evil" and wrote locks/"evil\n.lock.toml", exit 0, which
    # check then failed ("lock.name: 'evil\n' holds a control character"): the name's pattern ended in `$`, which
    # re.match lets match before a final newline. `import --name $'gx\n'` and `synth --import $'l3\n'` were refused
    # only by the entry's read-back, after the header was read ("entry.name: 'gx\n' is not the entry's name").
    root = copy_root(tmp_path)
    listed = {folder: sorted(p.name for p in folder.iterdir())
              for folder in (root / "locks", root / "registry" / "checkpoints")}
    assert bad("lock", R1, "--name", "evil\n", root=root) == [
        "passprice: error: Invalid value for --name: 'evil\\n' is not a lock name: use letters, digits, '.', '_' and "
        "'-' (first a letter or digit) (see 'cli lock --help')"
    ]
    header = str(REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz")
    assert bad("import", header, "--name", "gx\n", root=root) == [
        "passprice: error: checkpoint name 'gx\\n': use letters, digits, '.', '_' and '-' (first a letter or digit)"
    ]
    assert bad("synth", CONFIG, "--import", "l3\n", root=root) == [
        "passprice: error: checkpoint name 'l3\\n': use letters, digits, '.', '_' and '-' (first a letter or digit)"
    ]
    assert {folder: sorted(p.name for p in folder.iterdir()) for folder in listed} == listed


def _input_line(output: Path, option: str, reads: str, given: Path) -> str:
    return (f"passprice: error: {output}: {option} {output} is {reads} {given}, a file the command reads; writing it "
            "would replace that input: give another file")


def test_an_output_over_the_commands_own_input_is_refused(tmp_path: Path) -> None:
    # Round 25: `simulate R1 --trace t.jsonl -o t.jsonl --force` replaced the trace with the simulation's text,
    # `sweep --file grid.toml -o grid.toml --force` the grid with its CSV, `synth c.json -o c.json --force` the
    # configuration with a binary header, and `sweep ./mine.toml -o mine.toml --force` the serving file priced: each
    # exit 0, the input lost. Through a link (--plot p.svg, p.svg -> the trace) too.
    root = copy_root(tmp_path)
    trace, grid, config, mine = (tmp_path / n for n in ("t.jsonl", "grid.toml", "c.json", "mine.toml"))
    trace.write_bytes((REPO / "examples" / "requests.jsonl").read_bytes())
    grid.write_bytes((REPO / "examples" / "grid.toml").read_bytes())
    config.write_bytes(Path(CONFIG).read_bytes())
    mine.write_bytes((root / "registry" / "servings" / f"{R1}.toml").read_bytes())
    before = {p: p.read_bytes() for p in (trace, grid, config, mine)}
    plot = tmp_path / "p.svg"
    plot.symlink_to(trace)
    assert bad("simulate", R1, "--trace", str(trace), "-o", str(trace), "--force", root=root) == [
        _input_line(trace, "-o", "--trace", trace)]
    assert bad("simulate", R1, "--trace", str(trace), "--plot", str(plot), "--force", root=root) == [
        _input_line(plot, "--plot", "--trace", trace)]
    assert bad("simulate", str(mine), "--synthetic", "3", "-o", str(mine), "--force", root=root) == [
        _input_line(mine, "-o", "SERVING", mine)]
    assert bad("sweep", "--file", str(grid), "-o", str(grid), "--force", root=root) == [
        _input_line(grid, "-o", "--file", grid)]
    assert bad("sweep", str(mine), "-o", str(mine), "--force", root=root) == [_input_line(mine, "-o", "SERVINGS", mine)]
    card = tmp_path / "c.toml"  # `sweep R1 --cards a100_sxm4_80gb,c.toml -o c.toml --force`: the card replaced
    card.write_bytes((root / "facts" / "cards" / "h200_sxm_141gb.toml").read_bytes())
    before[card] = card.read_bytes()
    assert bad("sweep", R1, "--cards", f"a100_sxm4_80gb,{card}", "-o", str(card), "--force", root=root) == [
        _input_line(card, "-o", "--cards", card)]
    assert bad("synth", str(config), "-o", str(config), "--force", root=root) == [
        _input_line(config, "-o", "CONFIG", config)]
    assert {p: p.read_bytes() for p in before} == before and plot.is_symlink()
    # Another file is written, as before.
    out = tmp_path / "out.txt"
    assert invoke("simulate", R1, "--trace", str(trace), "-o", str(out), root=root).exit_code == 0
    assert out.read_text().strip()


def test_a_lock_over_the_serving_or_card_file_it_prices_is_refused(tmp_path: Path) -> None:
    # Round 25: `lock ./mine.toml -o ./mine.toml --force` (outside the registry: the user's own lock) printed
    # "locked mine … -> mine.toml", exit 0, the serving file replaced by the lock; `--card c.toml -o c.toml` alike.
    root = copy_root(tmp_path)
    mine, card = tmp_path / "mine.toml", tmp_path / "c.toml"
    mine.write_bytes((root / "registry" / "servings" / f"{R1}.toml").read_bytes())
    card.write_bytes((root / "facts" / "cards" / "h200_sxm_141gb.toml").read_bytes())
    before = mine.read_bytes(), card.read_bytes()
    assert bad("lock", str(mine), "-o", str(mine), "--force", root=root) == [_input_line(mine, "-o", "SERVING", mine)]
    assert bad("lock", R1, "--card", str(card), "-o", str(card), "--force", root=root) == [
        _input_line(card, "-o", "--card", card)]
    assert (mine.read_bytes(), card.read_bytes()) == before
    assert invoke("lock", str(mine), "-o", str(tmp_path / "mine.lock.toml"), root=root).exit_code == 0


@pytest.mark.parametrize("inside", ["facts/cards/mine", "registry/servings/x.toml", "locks/old", "sources/mine"])
def test_init_inside_a_record_folder_of_the_registry_around_it_is_refused(tmp_path: Path, inside: str) -> None:
    # Round 25: `init facts/cards/mine` run in a registry exited 0 and wrote a registry there; the outer registry's
    # check then failed, exit 2 ("facts/cards/mine: not a folder passprice reads: its 1 .toml file is neither checked
    # nor priced"); `init registry/servings/x.toml` likewise ("is a folder, not a serving file").
    root = copy_root(tmp_path)
    tree = inside.split("/")[0]
    assert bad("init", str(root / inside), root=root) == [
        f"passprice: error: {root / inside}: inside {root / tree}/, a record folder of the registry at {root}, which "
        "reads its own records there and fails its check on a folder of .toml files it does not read (a new registry "
        "is one): start the new registry outside that registry's facts/, registry/, locks/ and sources/"
    ]
    assert not (root / inside).exists()
    assert invoke("check", root=root).exit_code == 0
    assert invoke("init", str(tmp_path / "beside"), root=root).exit_code == 0


@pytest.mark.parametrize("kind", ["new-serving", "import", "synth"])
def test_a_record_written_through_a_link_onto_another_record_is_refused(tmp_path: Path, kind: str) -> None:
    # Round 25: `new-serving evil R1 --force` with registry/servings/evil.toml a link to facts/cards/a40.toml wrote
    # the serving over the card through the link ("wrote …/evil.toml", exit 0); `import FILE --name evil --force` and
    # `synth CONFIG --import evil --force` (registry/checkpoints/evil.toml the link) wrote the checkpoint entry there.
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "a40.toml"
    before = card.read_bytes()
    folder = root / "registry" / ("servings" if kind == "new-serving" else "checkpoints")
    link = folder / "evil.toml"
    link.symlink_to(card)
    args = {"new-serving": ("new-serving", "evil", R1),
            "import": ("import", str(REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"), "--name", "evil"),
            "synth": ("synth", CONFIG, "--import", "evil")}[kind]
    assert bad(*args, "--force", root=root) == [
        f"passprice: error: {link}: a symbolic link to {card}, a file of another record folder: writing through it "
        "would replace that record: remove the link, or give another name"
    ]
    assert card.read_bytes() == before and link.is_symlink()
    # A link to another serving of the same folder is that serving's other name: written through, as before.
    if kind == "new-serving":
        link.unlink()
        link.symlink_to(f"{R1}.toml")
        assert invoke("new-serving", "evil", R1, "--force", root=root).exit_code == 0
        assert link.is_symlink()
