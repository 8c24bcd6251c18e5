"""SwingXtimes: the counting suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import OfficialChoice, TaskCard, register

CARD = register(TaskCard(
    name="SwingXtimes",
    suite="counting",
    rank=3,
    code=3,
    env_class="envs.tasks.swing_xtimes:SwingXtimes",
    # ood: swings [<= 3]
    ood_tiers=(
        {"repeats": 4, "distractors": (1, 3)},
        {"repeats": 5, "distractors": (1, 3)},
        {"repeats": 6, "distractors": (1, 3)},
        {"repeats": 7, "distractors": (1, 3)},
        {"repeats": 8, "distractors": (1, 3)},
    ),
    # the official "move to the top of the target" option takes either target, so the slot also
    # covers the alternation (settled by the goal alone); it is a lower bound, as on our backend
    official_history_choices=(OfficialChoice("swing again or put down", ("move to the top of the target", "put the cube on the table"), "after_first"),),
))
