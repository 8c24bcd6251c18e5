"""Test-only envs that vary a benchmark task, to check that the memory generalises (not benchmark tasks)."""
