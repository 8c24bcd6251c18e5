"""The official RoboMME envs as a second backend (see envs/official/env.py)."""
