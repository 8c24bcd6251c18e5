"""Scene events played on the absolute step clock (in the conditioning video and live alike):
swaps, highlights, the stick tasks' visual feedback, the Permanence timeline.
"""
