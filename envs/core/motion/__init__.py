"""Scripted motions by kind of move (planning and IK on top of ``envs/core/solvers.py``): generators of
joint actions that the demonstrations and the scripted policy execute alike.
"""
