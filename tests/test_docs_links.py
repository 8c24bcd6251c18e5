"""Every relative link in the README and docs/ leads somewhere: the file exists and, when the link
names a ``#section``, that file has a heading whose GitHub anchor is that section.

Why: the README was split into docs/ pages; a link to a moved section fails silently on GitHub
(it opens the top of the page), so a newcomer following the guide lands in the wrong place.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\((?P<target>[^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*#*$", re.MULTILINE)


def github_anchor(title: str) -> str:
    """The anchor GitHub gives a heading: markup dropped, lowercase, punctuation other than ``-``
    and ``_`` removed, each space a ``-``."""
    text = re.sub(r"`|\*\*|\*|<[^>]+>", "", title)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_of(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for m in _HEADING.finditer(_FENCE.sub("", page.read_text())):
        a = github_anchor(m.group("title"))
        n = seen.get(a, 0)
        out.add(a if n == 0 else f"{a}-{n}")
        seen[a] = n + 1
    return out


def links_of(page: Path) -> list[str]:
    return [m.group("target") for m in _LINK.finditer(_FENCE.sub("", page.read_text()))]


def test_the_anchor_rule_is_githubs():
    assert github_anchor("A five-minute tour") == "a-five-minute-tour"
    assert github_anchor("Results v1 – the paper's protocol (`test` 0-49)") == "results-v1--the-papers-protocol-test-0-49"
    assert github_anchor("What runs where?") == "what-runs-where"


def test_there_are_docs_to_check():
    assert len(PAGES) >= 5 and sum(len(links_of(p)) for p in PAGES) >= 10


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path):
    broken = []
    for target in links_of(page):
        if re.match(r"[a-z]+:", target):  # https:, mailto: ... are not ours to check
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
            continue
        if anchor and dest.suffix == ".md" and anchor not in anchors_of(dest):
            broken.append(f"{target}: {dest.name} has no heading with anchor #{anchor}")
    assert not broken, f"{page.relative_to(ROOT)} has broken links:\n" + "\n".join(broken)
