"""Benchmark scripts (bench_*.py) beside the reports they write (*.md, results/)."""
