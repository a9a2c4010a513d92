"""``python -m dsh_sidecar`` = the ``dsh-search`` console script."""

from dsh_sidecar.cli import main

if __name__ == "__main__":  # not when multiprocessing's spawn re-imports the main module
    raise SystemExit(main())
