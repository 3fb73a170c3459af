"""``python -m nuvec.lm``: see nuvec/lm/cli.py."""

import sys

from .cli import main

sys.exit(main())
