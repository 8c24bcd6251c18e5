"""``python -m experiments.wandb_group``: Write a W&B offline group from published results directories.

The command users type; its code is :mod:`experiments.reporting.wandb_group`.
"""

import sys

from experiments.reporting.wandb_group import main

if __name__ == "__main__":
    sys.exit(main())
