"""Number and ordinal words used by goal and subgoal templates."""

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
ORDINAL_WORDS = ("zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def number_word(n: int) -> str:
    return NUMBER_WORDS[n]


def ordinal_word(n: int) -> str:
    return ORDINAL_WORDS[n]
