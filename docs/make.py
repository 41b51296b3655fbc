"""Regenerate what the README shows from passprice itself, in one command (run from the checkout's top):

    python docs/make.py

- the README's glossary section, from passprice.glossary (the text `passprice explain` prints);
- the list of architectures passprice prices, in the README and docs/DESIGN.md, from passprice.architectures;
- .pre-commit-hooks.yaml, the hook this project publishes, from passprice.scaffold.published_hooks (it runs on every
  commit, as the hook `passprice init` writes does);
- the gallery's pictures under docs/, each drawn by the passprice command the README shows beside it;
- src/passprice/shipped_stacks.json, the shipped registry's stacks whose fit finds nothing (a review or check of
  those stacks as shipped re-runs no fit while it names the running pricing code: re-run after a pricing change).

Every picture is deterministic (no dates, fixed SVG ids), so a rerun on the same facts changes no byte.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
README = TOP / "README.md"
BEGIN = "<!-- glossary: begin (python docs/make.py writes it) -->"
END = "<!-- glossary: end -->"

#: The gallery: each picture and the passprice arguments that draw it (the README shows the same commands).
PICTURES = (
    ("docs/roofline-r1-qwen7b-h200.png",
     ["roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--limit", "1024"]),
    ("docs/sweep-r1-gemma.png",
     ["sweep", "r1-qwen7b-h200", "gemma3-270m-h100", "--cards", "h200_sxm_141gb,h100_sxm5_80gb", "--positions",
      "2048", "--batches", "1-4096*2"]),
    ("docs/simulate-r1-h200.png",
     ["simulate", "r1-qwen7b-h200", "--synthetic", "1000", "--seed", "7", "--rate", "200"]),
    ("docs/audit-qwen35-h200-mtp.png",
     ["audit", "qwen35-27b-h200-mtp"]),
    ("docs/validate-llamacpp-cuda-2405.png",
     ["validate", "--stack", "llamacpp-cuda-2405"]),
)


def shipped() -> None:
    """Rewrite src/passprice/shipped_stacks.json (passprice.stackfits.SHIPPED_STACKS) from the checkout's registry:
    each stack whose fit, re-run here afresh in a temporary copy, finds nothing (passprice.calibrate.verify_stack)
    and whose re-fit (passprice.calibrate.calibrate, written without its layout as a review's private copy writes it)
    gives its file's own bytes, with its key (passprice.stackfits._shipped_key); a stack that does not is left out
    (its fit is re-run). The table names the running package's pricing-model digest: run this with the checkout's
    own package installed, after its last edit of a pricing module (the lead re-locks then too)."""
    import json
    import shutil
    import tempfile

    sys.path.insert(0, str(TOP / "src"))
    from passprice import stackfits
    from passprice.calibrate import calibrate, verify_stack, write_calibration
    from passprice.measurements import load_runs
    from passprice.registry import find_root
    from passprice.stacks import load_stack, stack_path

    solver = stackfits._shipped_solver()
    assert solver is not None, "the running package's pricing-model digest cannot be made"
    keys: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in ("facts", "registry", "schema", "sources"):
            shutil.copytree(TOP / name, Path(folder) / name)
        copy = find_root(folder)
        runs = load_runs(copy)
        for name in copy.scan(copy.stacks):
            stack = load_stack(copy, str(copy.stacks / f"{name}.toml"))
            if verify_stack(copy, stack, runs):
                continue
            path = stack_path(copy, stack.name)
            before = path.read_bytes()
            key = stackfits._shipped_key(copy, stack, runs)
            write_calibration(copy, calibrate(copy, stack.name), keep_layout=False)
            if key is not None and path.read_bytes() == before:
                keys[stack.name] = key
    table = {"about": ("The stacks of the shipped registry whose fit finds nothing and whose re-fit writes their file "
                       "as it is, by the digest of their fit's inputs (passprice.stackfits.shipped_stack; docs/make.py "
                       "writes it)"),
             "pricing_model": solver[0], "numpy": solver[1], "machine": solver[2], "stacks": dict(sorted(keys.items()))}
    stackfits.SHIPPED_STACKS.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


def glossary() -> None:
    """Rewrite the README's glossary block from passprice.glossary."""
    sys.path.insert(0, str(TOP / "src"))
    from passprice.glossary import markdown

    text = README.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    README.write_text(f"{head}{BEGIN}\n{markdown()}\n{END}{tail}", encoding="utf-8")


ARCH_BEGIN = "<!-- architectures: begin (python docs/make.py writes it from passprice.architectures) -->"
ARCH_END = "<!-- architectures: end -->"


def architectures() -> None:
    """Rewrite the list of known architectures in the README and DESIGN.md from passprice.architectures."""
    sys.path.insert(0, str(TOP / "src"))
    from passprice.architectures import markdown

    for path in (README, TOP / "docs" / "DESIGN.md"):
        text = path.read_text(encoding="utf-8")
        head, rest = text.split(ARCH_BEGIN, 1)
        _, tail = rest.split(ARCH_END, 1)
        path.write_text(f"{head}{ARCH_BEGIN}\n{markdown()}\n{ARCH_END}{tail}", encoding="utf-8")


def hooks() -> None:
    """Rewrite .pre-commit-hooks.yaml from passprice.scaffold."""
    sys.path.insert(0, str(TOP / "src"))
    from passprice.scaffold import published_hooks

    (TOP / ".pre-commit-hooks.yaml").write_text(published_hooks(), encoding="utf-8")


def pictures() -> None:
    """Draw every gallery picture with the passprice the current Python runs."""
    for path, args in PICTURES:
        command = [sys.executable, "-c", "from passprice.cli import main; main()", "--root", str(TOP), *args]
        command += ["--plot", str(TOP / path), "--force"]
        subprocess.run(command, cwd=TOP, check=True, stdout=subprocess.DEVNULL)
        print(f"{path}: passprice {' '.join(args)}")


if __name__ == "__main__":
    glossary()
    architectures()
    hooks()
    pictures()
    shipped()
