"""``python -m experiments.campaign``: Run, resume and publish the staged results campaign at one pinned commit.

The command users type; its code is :mod:`experiments.reporting.campaign`.
"""

import sys

from experiments.reporting.campaign import main

if __name__ == "__main__":
    sys.exit(main())
