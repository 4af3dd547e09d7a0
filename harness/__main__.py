from __future__ import annotations

import sys

from harness.cli.main import main

sys.exit(main())
