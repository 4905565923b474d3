"""``python -m ai_chat``: the same as the ``ai-chat`` command."""

import sys

from ._cli import main

sys.exit(main())
