"""The top of an episode's env stack, the same on both backends: the memory (or the recent-frame
baseline) over the subgoal-level env, then the recorder when the episode is filmed."""

from __future__ import annotations


def wrap_top(env, memory, cond, video_path=None):
    """``env`` under :class:`~wrappers.memory_wrapper.MemoryWrapper` (``RecentFrames`` for a recent-N
    condition) when ``memory`` is given, and under :class:`~wrappers.record_episode.RecordEpisode`
    when ``video_path`` is."""
    top = env
    if memory is not None:
        from wrappers.memory_wrapper import MemoryWrapper
        from wrappers.recent_frames import RecentFrames

        top = MemoryWrapper(env, memory) if cond.recent_window is None else RecentFrames(env, memory, cond.recent_window)
    if video_path is not None:
        from wrappers.record_episode import RecordEpisode

        top = RecordEpisode(top, video_path)
    return top
