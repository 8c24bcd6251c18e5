"""The subgoal language shared by the composers, the memory, the policies and the envs.

It imports nothing else of the project, so every package can depend on it and the memory
never has to import ``policies`` (or the simulator) to read or rewrite a subgoal.
"""
