"""``python -m harness``: the command line (:mod:`harness.cli.main`)."""

from __future__ import annotations

import sys

from harness.cli.main import main

sys.exit(main())
