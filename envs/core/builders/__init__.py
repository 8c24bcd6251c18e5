"""Builders of the scene objects several tasks share (beyond ``envs/core/primitives.py``), and where
actors go when they leave the scene.
"""
