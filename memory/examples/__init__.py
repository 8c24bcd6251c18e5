"""Example memories written against :mod:`memory.contract.interface`, run like ours (``--conditions memory:<module>:<Class>``)."""
