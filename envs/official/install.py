"""Whether the official ``robomme`` package is importable, and exactly what to do when it is not."""

from __future__ import annotations

import importlib

INSTALL_HINT = (
    "the official RoboMME package `robomme` is not importable. It is not on the package registries; "
    "install it beside this project (its envs run on the mani-skill 3.0.1 already installed):\n"
    "  git clone https://github.com/RoboMME/robomme_benchmark /path/to/robomme_src\n"
    "  .venv/bin/pip install --no-deps -e /path/to/robomme_src     # or: export PYTHONPATH=/path/to/robomme_src/src\n"
    "(--no-deps: its own pins torch 2.9.1 / torchvision / the ManiSkill fork are not needed for the envs)"
)


class RobommeUnavailable(ImportError):
    """``--backend robomme`` without the official package: the message says how to install it."""


def robomme_available() -> tuple[bool, str]:
    """(True, "") when ``robomme`` imports, else (False, the reason)."""
    try:
        importlib.import_module("robomme.env_record_wrapper")
    except ImportError as exc:
        return False, f"{type(exc).__name__}: {exc}"
    return True, ""


def require_robomme():
    """The imported ``robomme`` module, or :class:`RobommeUnavailable` with the install commands."""
    ok, why = robomme_available()
    if not ok:
        raise RobommeUnavailable(f"{INSTALL_HINT}\n(import failed: {why})")
    return importlib.import_module("robomme")
