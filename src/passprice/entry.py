"""The ``passprice`` console script: a command whose output the memo kept (:mod:`passprice.memo`) is answered
before click, attrs or the rest of passprice is imported; every other run is :func:`passprice.cli.main`'s."""

from __future__ import annotations


def main() -> None:
    """Run ``passprice`` with ``sys.argv``: the memo's replay when one holds, else the command line
    (:func:`passprice.cli.main`), watched by the memo when its output may be kept. Exits as the command exits."""
    from passprice import memo

    memo.main(_command_line)


def _command_line() -> None:
    from passprice.cli import main as cli_main

    cli_main()
