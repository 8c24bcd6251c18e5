"""Task bases and the mixins / task state the task classes compose, one suite per module.
"""
