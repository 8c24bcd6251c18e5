"""The stated lint rule set (pyproject.toml [tool.ruff.lint]) holds over the whole repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_passes_with_the_stated_rules():
    p = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT)], cwd=ROOT,
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
