"""Layout draws: every random choice of a suite's episode that is not a task's own (all from the
episode's generator, in a fixed order).
"""
