"""``python -m experiments.publish``: Copy a run's rows and configs into benchmarks/results/<name>/.

The command users type; its code is :mod:`experiments.reporting.publish`.
"""

import sys

from experiments.reporting.publish import main

if __name__ == "__main__":
    sys.exit(main())
