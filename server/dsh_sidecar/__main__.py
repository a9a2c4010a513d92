"""``python -m dsh_sidecar`` = the ``dsh-search`` console script."""

from dsh_sidecar.cli import main

raise SystemExit(main())
