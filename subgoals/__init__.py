"""The bottom layer shared by the composers, the memory, the policies and the envs: the subgoal
language (``grammar``, ``numbers``) and the loop's one frame type (``frames``).

It imports nothing else of the project, so every package can depend on it and the memory
never has to import ``policies`` (or the simulator) to read or rewrite a subgoal, nor the
envs import the memory to hand it the frames it observes.
"""
