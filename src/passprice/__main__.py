"""``python -m passprice``: the same command as the ``passprice`` console script (:func:`passprice.entry.main`)."""

from passprice.entry import main

if __name__ == "__main__":
    main()
