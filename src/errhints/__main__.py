"""``python -m errhints``: the same program as the ``errhints`` command."""

import sys

from ._cli import main

sys.exit(main())
