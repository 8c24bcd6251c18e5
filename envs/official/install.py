"""Whether the official ``robomme`` package is importable, and how to install it beside the project.

``python -m envs.official.install /path/to/robomme_src`` (or ``bash scripts/setup.sh --robomme
/path/to/robomme_src``) checks that the path is a checkout of ``RoboMME/robomme_benchmark``, installs
it into the running interpreter with ``pip install --no-deps -e`` (its own pins, torch 2.9.1,
torchvision and the ManiSkill fork, are not needed for the envs: they run on the mani-skill 3.0.1
already installed), and imports it. A wrong path stops before pip runs, with the path and what is
missing in it.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

INSTALL_HINT = (
    "the official RoboMME package `robomme` is not importable. It is not on the package registries; "
    "install it beside this project (its envs run on the mani-skill 3.0.1 already installed):\n"
    "  git clone https://github.com/RoboMME/robomme_benchmark /path/to/robomme_src\n"
    "  .venv/bin/python -m envs.official.install /path/to/robomme_src   # or: bash scripts/setup.sh --robomme /path/to/robomme_src\n"
    "(it runs `pip install --no-deps -e /path/to/robomme_src`: its own pins torch 2.9.1 / torchvision / "
    "the ManiSkill fork are not needed for the envs)"
)

MARKERS = ("pyproject.toml", "src/robomme/__init__.py", "src/robomme/env_record_wrapper")
"""What a checkout of the benchmark holds (a file, or a package directory) that the install relies on."""


class RobommeUnavailable(ImportError):
    """``--backend robomme`` without the official package: the message says how to install it."""


class NotARobommeCheckout(ValueError):
    """The source path given to the installer is not a checkout of the benchmark."""


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


def check_source(path: str | Path) -> Path:
    """The resolved checkout path, or :class:`NotARobommeCheckout` naming the path and what it lacks."""
    p = Path(path).expanduser()
    if not p.exists():
        raise NotARobommeCheckout(f"--robomme {str(path)!r}: no such directory")
    if not p.is_dir():
        raise NotARobommeCheckout(f"--robomme {str(path)!r}: not a directory")
    missing = [m for m in MARKERS if not (p / m).exists() and not (p / (m + ".py")).exists()]
    if missing:
        raise NotARobommeCheckout(
            f"--robomme {str(path)!r} is not a checkout of RoboMME/robomme_benchmark: it has no {', '.join(missing)} "
            "(clone https://github.com/RoboMME/robomme_benchmark and give the clone's top directory)")
    return p.resolve()


def install(path: str | Path, python: str = sys.executable) -> str:
    """Install the checkout at ``path`` into ``python``'s environment (no dependencies), then import
    it there; returns the imported package's file. Raises on a bad path or a failed step."""
    src = check_source(path)
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "-e", str(src)], check=True)
    out = subprocess.run([python, "-c", "import robomme.env_record_wrapper, robomme; print(robomme.__file__)"],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m envs.official.install", description=__doc__.splitlines()[0])
    ap.add_argument("source", help="top directory of a clone of https://github.com/RoboMME/robomme_benchmark")
    args = ap.parse_args(argv)
    try:
        where = install(args.source)
    except NotARobommeCheckout as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as exc:
        print(f"error: {' '.join(map(str, exc.cmd[:4]))} ... failed with exit status {exc.returncode}"
              + (f":\n{exc.stderr}" if exc.stderr else ""), file=sys.stderr)
        return 1
    print(f"robomme installed from {check_source(args.source)}; imports from {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
