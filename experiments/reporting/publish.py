"""Publish a finished run into the repository: ``benchmarks/results/<name>/``.

    python -m experiments.publish runs/quick quick_test_0_10

copies the run's ``config.json`` (and the ``config.<n>.json`` a resumed run set aside) and writes its
rows, compressed, to ``episodes.jsonl.gz``; a ``NOTES.md`` already in the destination is kept, and so
is every config a re-publish would otherwise drop (a campaign clone resumed from published rows may
hold only the latest config). Only a run whose every row ran at one commit with a clean checkout is
published: a README table generated from it (``python -m experiments.report --readme README.md``)
can then name that one commit and mean it. A name that exists is refused unless ``--replace`` is given.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
from pathlib import Path

from experiments.loop.results import CONFIG_FILE, RESULTS_FILE, read_rows, results_path

ROOT = Path(__file__).resolve().parents[2]  # the checkout: experiments/reporting/ is two below it
PUBLISHED = ROOT / "benchmarks" / "results"


class PublishError(ValueError):
    """The run cannot be published as one commit's results (the message says why)."""


def commits_of(rows: list[dict]) -> dict[str, int]:
    """How many rows ran at each commit (``None``: a row written before rows named their commit)."""
    out: dict[str, int] = {}
    for r in rows:
        key = str(r.get("code_commit"))
        out[key] = out.get(key, 0) + 1
    return out


def check_publishable(rows: list[dict]) -> str:
    """The one commit all ``rows`` ran at; raises :class:`PublishError` otherwise."""
    if not rows:
        raise PublishError("no rows to publish")
    commits = commits_of(rows)
    if len(commits) != 1 or "None" in commits or "unknown" in commits:
        raise PublishError(f"rows come from {len(commits)} commits ({commits}); publish one commit's run")
    dirty = sum(1 for r in rows if r.get("code_dirty"))
    if dirty:
        raise PublishError(f"{dirty} rows ran in a checkout with uncommitted changes; rerun from a clean clone")
    return next(iter(commits))


NOTES_FILE = "NOTES.md"


def config_records(run_dir: Path) -> list[str]:
    """The texts of ``run_dir``'s configs, oldest first: ``config.<n>.json`` by ``n``, then ``config.json``."""
    run_dir = Path(run_dir)
    numbered = {int(p.name.split(".")[1]): p for p in run_dir.glob("config.*.json") if p.name.split(".")[1].isdigit()}
    paths = [numbered[n] for n in sorted(numbered)] + [run_dir / CONFIG_FILE]
    return [p.read_text() for p in paths if p.exists()]


def _unique(texts: list[str]) -> list[str]:
    """``texts`` with each JSON document once, at its last occurrence, so the latest config stays last."""
    seen: list = []
    out: list[str] = []
    for t in reversed(texts):
        doc = json.loads(t)
        if doc not in seen:
            seen.append(doc)
            out.append(t)
    return out[::-1]


def publish(run_dir: Path, name: str, *, dest_root: Path = PUBLISHED, replace: bool = False) -> Path:
    """Copy ``run_dir``'s config and rows to ``dest_root/name``; returns that directory."""
    if not name or "/" in name or name.startswith("."):
        raise PublishError(f"bad results name {name!r} (one path component)")
    rows = read_rows(run_dir)
    commit = check_publishable(rows)
    config = Path(run_dir) / CONFIG_FILE
    if not config.exists():
        raise PublishError(f"{run_dir} has no {CONFIG_FILE}")
    doc = json.loads(config.read_text())
    if doc.get("git_commit") != commit:
        raise PublishError(f"{config} names commit {doc.get('git_commit')}, the rows ran at {commit}")
    dest = dest_root / name
    notes = None
    records = []
    if dest.exists():
        if not replace:
            raise PublishError(f"{dest} exists (use --replace)")
        notes = (dest / NOTES_FILE).read_text() if (dest / NOTES_FILE).exists() else None
        records = config_records(dest)
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    # every invocation that wrote rows keeps its config: the destination's earlier records first (a
    # clone resumed from them may not hold them all), then the run dir's, each once; the latest is
    # config.json, the others config.<n>.json in the order they ran
    records = _unique(records + config_records(Path(run_dir)))
    for n, text in enumerate(records[:-1], start=1):
        (dest / f"config.{n}.json").write_text(text)
    (dest / CONFIG_FILE).write_text(records[-1])
    if notes is not None:  # the hand-written account of a campaign's sessions outlives a re-publish
        (dest / NOTES_FILE).write_text(notes)
    rows.sort(key=lambda r: (r["task"], r["split"], r["condition"], int(r["seed"]), int(r["episode"])))
    # mtime=0: the same rows give the same bytes, so a re-publish shows no spurious diff
    with open(dest / (RESULTS_FILE + ".gz"), "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        for r in rows:
            f.write((json.dumps(r, sort_keys=True) + "\n").encode("utf-8"))
    assert results_path(dest).name.endswith(".gz")
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("name")
    ap.add_argument("--replace", action="store_true")
    args = ap.parse_args(argv)
    try:
        dest = publish(args.run_dir, args.name, replace=args.replace)
    except PublishError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"published {args.run_dir} as {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
