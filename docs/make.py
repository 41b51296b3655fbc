"""Regenerate what the README shows from passprice itself, in one command (run from the checkout's top):

    python docs/make.py

- the README's glossary section, from passprice.glossary (the text `passprice explain` prints);
- the list of architectures passprice prices, in the README and docs/DESIGN.md, from passprice.architectures;
- .pre-commit-hooks.yaml, the hook this project publishes, from passprice.scaffold.published_hooks (it runs on every
  commit, as the hook `passprice init` writes does);
- the gallery's pictures under docs/, each drawn by the passprice command the README shows beside it.

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
