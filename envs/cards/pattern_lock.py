"""PatternLock: the imitation suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import OfficialChoice, TaskCard, register

CARD = register(TaskCard(
    name="PatternLock",
    suite="imitation",
    rank=3,
    code=15,
    env_class="envs.tasks.pattern_lock:PatternLock",
    # ood: grid [5x5], pattern length [4-8]
    ood_tiers=(
        {"length": (9, 11)},
        {"length": (12, 14)},
        {"length": (15, 18)},
    ),
    official_history_choices=(OfficialChoice("direction", ("move *",)),),
))
