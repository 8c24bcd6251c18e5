"""Example memories written against :mod:`memory.interface`, run like ours (``--conditions memory:<module>:<Class>``)."""
