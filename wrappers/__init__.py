"""Gym wrappers that turn a RoboMME task into the hierarchical loop.

Stack (inside out): ``RoboMMEEnv`` (envs) → :class:`SubgoalExecution` (policy runs a subgoal's
action chunk) → :class:`MemoryLayer` (memory revises the composer's subgoal; pass-through when
disabled, recent-frame baseline with ``window``) → :class:`RecordEpisode` (optional mp4).
"""

from wrappers.subgoal_execution import SubgoalExecution

__all__ = ["SubgoalExecution"]
