"""``python -m experiments.report``: Tables, statistics and the README's generated blocks from results directories.

The command users type; its code is :mod:`experiments.reporting.report`.
"""

import sys

from experiments.reporting.report import main

if __name__ == "__main__":
    sys.exit(main())
