"""PickXtimes: the counting suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import OfficialChoice, TaskCard, register

CARD = register(TaskCard(
    name="PickXtimes",
    suite="counting",
    rank=2,
    code=1,
    env_class="envs.tasks.pick_xtimes:PickXtimes",
    # ood: repetitions [1-5]; distractor cubes in the new colours
    ood_tiers=(
        {"repeats": 6, "distractors": 1},
        {"repeats": 7, "distractors": 2},
        {"repeats": 8, "distractors": 3},
    ),
    official_history_choices=(OfficialChoice("repeat or stop", ("pick up the cube", "press the button to stop"), "after_first"),),
))
