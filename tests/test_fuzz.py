"""Bad-input fuzz: the subgoal grammar and the config/CLI parser never crash on arbitrary text.

Seeded random generators (no Hypothesis run): mutations of valid inputs plus random unicode and
garbage. The contract checked on every input:

* subgoal grammar: ``parse_subgoal`` returns a :class:`Subgoal` or raises
  :class:`SubgoalParseError` whose message quotes the text (and, for a bad point, the point);
  ``try_parse`` never raises; an accepted text canonicalises stably.
* config: ``parse_config`` returns a config, raises :class:`ConfigError` whose message names the
  bad value, or exits (``SystemExit``) with status 2 and a message on stderr naming it (status 0
  only for ``--help``). The value layer (``ExperimentConfig.from_flat(...)`` with fuzzed field values,
  ``expand_tasks``, ``parse_episodes``, ``check_preset``) takes 10,000+ inputs in the default
  suite; the full tyro command line costs ~50-90 ms per parse on these machines (tyro builds its
  parser on every call), so the default suite sends it 300 argv lists and the slow suite 10,000.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import time

import pytest

from experiments.loop.config import ConfigError, ExperimentConfig, check_preset, expand_tasks, parse_config, parse_episodes
from subgoals.grammar import Subgoal, SubgoalParseError, format_subgoal, parse_subgoal, try_parse

# --------------------------------------------------------------------------- generators
VALID_SUBGOALS = [
    "pick up the red cube at <142, 97> for the first time",
    "pick up the correct cube at <12, 200> for the third time",
    "press the button at <201, 33> to stop",
    "press the button",
    "put it down on the target at <88, 190>",
    "pick up the container at <120, 64> that hides the green cube",
    "hook the cube at <100, 100> to the target at <40, 230> with the peg",
    "move to the top of the left-side target at <55, 66> for the second time",
    "move to the nearest left target by circling around the stick clockwise",
    "insert the peg from the right side",
    "move home and stay still for 20 steps",
    "move forward",
    "pick up the highlighted cube at <0, 255>",
    "place the blue cube onto the target at <255, 0>.",
]
UNICODE_POOL = (
    "abcxyzABC <>,.;:!?0123456789-_=+/\\'\"()[]{}#@$%^&*~`|\t\n\r\x00\x7f"
    "\u00a0\u00e9\u00df\u0663\u0669\u06f3\u0e51\u2460\u00b2\u200b\u200d\u2028\u2029\ufeff\ufe64\ufe65"
    "\uff1c\uff1e\uff10\uff0c\u3000\u2212\u2013\U0001f600\U0001d7ce\ud7ff\ue000"
)
JUNK_TOKENS = ["<", ">", "<>", "< >", "<1,", "2>", "<-1, 5>", "<256, 3>", "<3.5, 4>", "<1, 2, 3>", "<०, 1>",
               "<\uff11, 2>", "<99999999999999999999, 1>", ",", "at", "the", "for", "time", "\x00", "\u200b"]


def _random_unicode(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        if rng.random() < 0.15:
            out.append(chr(rng.randint(0, 0x2FFFF)))
        else:
            out.append(rng.choice(UNICODE_POOL))
    return "".join(c for c in out if not 0xD800 <= ord(c) <= 0xDFFF)  # no lone surrogates


def _mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        i = rng.randint(0, len(chars))
        if op == 0 and chars:  # delete a run
            del chars[min(i, len(chars) - 1): min(len(chars), i + rng.randint(1, 6))]
        elif op == 1:  # insert garbage
            chars[i:i] = _random_unicode(rng, rng.randint(1, 4))
        elif op == 2 and chars:  # replace a character
            chars[min(i, len(chars) - 1)] = rng.choice(UNICODE_POOL)
        elif op == 3:  # splice a junk token
            chars[i:i] = " " + rng.choice(JUNK_TOKENS) + " "
        elif op == 4 and chars:  # duplicate a slice
            j = rng.randint(0, len(chars))
            a, b = sorted((i, j))
            chars[i:i] = chars[a:b]
        elif op == 5:  # change a number into a big / negative / decimal one
            s = "".join(chars)
            s = re.sub(r"\d+", lambda m: rng.choice(["-" + m.group(), m.group() + "0000", m.group() + ".5", "", "1e3"]), s, count=1)
            chars = list(s)
        else:  # swap case / truncate
            chars = list("".join(chars).swapcase()) if rng.random() < 0.5 else chars[: i]
    return "".join(chars)


def _fuzz_texts(seed: int, n: int, valid: list[str]) -> list[str]:
    rng = random.Random(seed)
    out = []
    for k in range(n):
        r = k % 4
        if r in (0, 1):
            out.append(_mutate(rng, rng.choice(valid)))
        elif r == 2:
            out.append(_random_unicode(rng, rng.randint(0, 60)))
        else:
            out.append(" ".join(rng.choice(JUNK_TOKENS + valid[:3]) for _ in range(rng.randint(0, 8))))
    return out


# --------------------------------------------------------------------------- subgoal grammar
def _shown(text: str) -> str:
    return repr(text) if len(text) <= 200 else repr(text[:200] + "...")


def test_subgoal_grammar_never_crashes_and_names_the_bad_text():
    texts = _fuzz_texts(20250101, 12_000, VALID_SUBGOALS)
    t0 = time.perf_counter()
    accepted = rejected = 0
    for text in texts:
        try:
            sg = parse_subgoal(text)
        except SubgoalParseError as e:
            rejected += 1
            msg = str(e)
            assert e.text is text
            assert msg.startswith(f"malformed subgoal {_shown(text)}: "), (text, msg)
            quoted = re.findall(r"'(<[^']*)'", e.problem)  # the offending point, as the problem quotes it (repr)
            for q in quoted:
                assert q.removesuffix("...") in repr(text), (text, msg)
            assert try_parse(text) is None
            continue
        except Exception as e:  # noqa: BLE001 - anything else is a crash
            pytest.fail(f"parse_subgoal({text!r}) crashed with {type(e).__name__}: {e}")
        accepted += 1
        assert isinstance(sg, Subgoal) and isinstance(try_parse(text), Subgoal)
        canonical = format_subgoal(sg)
        assert format_subgoal(parse_subgoal(canonical)) == canonical, text
    elapsed = time.perf_counter() - t0
    assert accepted > 1_000 and rejected > 1_000, (accepted, rejected)  # both paths exercised
    assert elapsed < 60, f"12,000 subgoals took {elapsed:.1f} s"


def test_subgoal_grammar_rejects_non_strings_by_name():
    for bad in (None, 3, 2.5, b"pick up the cube", ["pick"], {"a": 1}, object()):
        with pytest.raises(SubgoalParseError, match="expected a string, got " + type(bad).__name__):
            parse_subgoal(bad)
        assert try_parse(bad) is None


# --------------------------------------------------------------------------- config: value layer
VALID_TASK_WORDS = ["all", "counting", "permanence", "reference", "imitation", "PickXtimes", "BinFill", "VideoUnmask",
                    "RouteStick", "StopCube"]
VALID_EPISODES = ["0", "0:20", "3 7", "0,3,7", "0:6:2", "49", "10:12"]
VALID_CONDITIONS = ["oracle", "no-memory", "memory", "recent4", "recent16", "memory-no-route", "memory-no-count"]


def _names(value: str, msg: str) -> bool:
    """Whether ``msg`` names ``value``: its repr, or the value itself (or a piece of it) quoted.

    An episode list that is well formed but reaches past the split is named by the first episode
    index out of range (``0:67`` -> "episode 50 is out of range for split 'test'").
    """
    if repr(value) in msg or (value and (value in msg or repr(value)[1:-1] in msg)):
        return True
    if re.match(r"episode \d+ is out of range for split ", msg):
        return True
    pieces = [p for p in re.split(r"[\s,]+", value) if p]
    return any(repr(p) in msg or f"{p}" in msg for p in pieces)


def test_config_values_never_crash_and_errors_name_the_value():
    rng = random.Random(777)
    t0 = time.perf_counter()
    n = ok = known = 0
    for k in range(10_500):
        field = ("tasks", "episodes", "conditions", "split", "preset", "seeds", "numbers")[k % 7]
        base = {"tasks": VALID_TASK_WORDS, "episodes": VALID_EPISODES, "conditions": VALID_CONDITIONS,
                "split": ["test", "train", "val"], "preset": ["quick", "paper"], "seeds": ["7"], "numbers": ["4"]}[field]
        value = _mutate(rng, rng.choice(base)) if k % 3 else _random_unicode(rng, rng.randint(0, 20))
        n += 1
        try:
            if field == "tasks":
                expand_tasks((value,))
                ExperimentConfig.from_flat(tasks=(value,))
            elif field == "episodes":
                parse_episodes((value,))
                ExperimentConfig.from_flat(episodes=(value,))
            elif field == "conditions":
                ExperimentConfig.from_flat(conditions=(value,))
            elif field == "split":
                ExperimentConfig.from_flat(split=value, episodes=("0",))
            elif field == "preset":
                check_preset(value)
            elif field == "seeds":
                seeds = (rng.randint(-5, 5), rng.randint(-5, 5))
                value = str(seeds[0])  # the only bad seed value is a repeat, which names itself
                ExperimentConfig.from_flat(seeds=seeds)
            else:
                name = rng.choice(["horizon", "max_steps", "render_stride", "workers", "max_videos", "history_blind_p",
                                   "openpi_port", "openpi_recv_timeout_s"])
                number = rng.choice([0, -1, 1, 2, 10**9, -(10**9), 0.5, 1.5, float("nan"), 65536])
                value = str(number)
                ExperimentConfig.from_flat(**{name: number})
            ok += 1
        except ConfigError as e:
            msg = str(e)
            assert msg, value
            if value.replace(",", " ").strip():  # a blank value is reported as missing ("no episodes given")
                assert _names(value, msg), (field, value, msg)
        except Exception as e:  # noqa: BLE001 - anything else is a crash
            if field == "episodes" and _known_episode_digit_bug(value):
                known += 1
                continue
            pytest.fail(f"{field}={value!r} crashed with {type(e).__name__}: {e}")
    elapsed = time.perf_counter() - t0
    assert n >= 10_000 and 500 < ok < n - 500, ok
    assert elapsed < 60, f"{n} config values took {elapsed:.1f} s"


def _known_episode_digit_bug(value: str) -> bool:
    """``parse_episodes`` takes ``str.isdigit()`` for "is an integer": digits that are not decimal
    (superscripts, circled digits: ``²``, ``①``) pass it and then ``int()`` raises ``ValueError``
    instead of :class:`ConfigError` (the CLI still exits 2 naming the value, via tyro)."""
    return any(p.isdigit() and not p.isdecimal() for p in value.replace(",", " ").split())


def test_non_decimal_digit_episode_is_a_config_error():
    with pytest.raises(ConfigError, match="'²'"):
        parse_episodes(("²",))


# --------------------------------------------------------------------------- config: command line
VALID_ARGV = [
    ["--tasks", "PickXtimes", "--episodes", "0:2", "--conditions", "oracle", "no-memory", "memory"],
    ["--preset", "quick", "--tasks", "counting"],
    ["--preset", "paper", "--seeds", "7", "11"],
    ["--tasks", "BinFill", "--split", "val", "--episodes", "0", "3", "--render-stride", "2"],
    ["--conditions", "no-memory", "--memory.no-route", "--recent-window", "8"],
    ["--policy", "openpi", "--openpi-port", "8000", "--openpi-recv-timeout-s", "5"],
    ["--workers", "2", "--executor", "local", "--wandb", "disabled", "--out", "runs/x"],
    ["--composer", "history-blind", "--history-blind-p", "0.5", "--horizon", "16", "--max-steps", "900"],
]
FLAGS = sorted({a for argv in VALID_ARGV for a in argv if a.startswith("--")})


def _mutate_argv(rng: random.Random, argv: list[str]) -> list[str]:
    out = list(argv)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(5)
        i = rng.randrange(len(out) + 1)
        if op == 0 and out:
            out[min(i, len(out) - 1)] = _mutate(rng, out[min(i, len(out) - 1)])
        elif op == 1:
            out.insert(i, _random_unicode(rng, rng.randint(0, 8)))
        elif op == 2:
            out.insert(i, rng.choice(FLAGS))
        elif op == 3 and out:
            del out[min(i, len(out) - 1)]
        else:
            out.insert(i, rng.choice(FLAGS) + "=" + _random_unicode(rng, rng.randint(0, 5)))
    return [a for a in out if "\x00" not in a]  # a real command line cannot carry NUL bytes


def _squash(s: str) -> str:
    """stderr without tyro's box drawing and line wrapping, to find a value in it."""
    return re.sub(r"[\s\u2500-\u257f]+", "", s)


def _check_cli(argv: list[str]) -> str:
    err = io.StringIO()
    out = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            parse_config(argv)
        return "ok"
    except ConfigError as e:
        msg = str(e)
        values = [p for a in argv for p in (a, *a.split("=", 1)[1:])]
        assert msg, argv
        assert any(_names(v, msg) for v in values if v) or "''" in msg or msg.startswith("no "), (argv, msg)
        return "config-error"
    except SystemExit as e:
        if e.code == 0:
            assert any(a in ("-h", "--help") or a.startswith("--help") for a in argv) or out.getvalue(), argv
            return "help"
        assert e.code == 2, (argv, e.code)
        text = _squash(err.getvalue())
        assert text, f"exit 2 without a message for {argv!r}"
        raw = [p for a in argv for p in (a, *a.split("=", 1)[1:])]
        pieces = {_squash(p) for p in raw} | {_squash(repr(p)[1:-1]) for p in raw}  # as given, or escaped
        # a blank argument has nothing to quote: then any message will do ("invalid choice ''", "Unrecognized options")
        named = any(p[:20] in text for p in pieces if p) or "" in pieces
        assert named, (argv, err.getvalue()[-800:])
        return "exit-2"
    except Exception as e:  # noqa: BLE001 - anything else is a crash
        pytest.fail(f"parse_config({argv!r}) crashed with {type(e).__name__}: {e}")


def _cli_inputs(seed: int, n: int) -> list[list[str]]:
    rng = random.Random(seed)
    out = []
    for k in range(n):
        if k % 5 == 4:
            out.append([_random_unicode(rng, rng.randint(0, 10)) for _ in range(rng.randint(0, 4))])
        else:
            out.append(_mutate_argv(rng, rng.choice(VALID_ARGV)))
    return out


def test_cli_never_crashes_and_names_the_bad_value():
    kinds = [_check_cli(a) for a in _cli_inputs(4242, 300)]
    assert {"ok", "config-error", "exit-2"} <= set(kinds), sorted(set(kinds))


@pytest.mark.slow
def test_cli_ten_thousand_argv_lists():
    kinds = [_check_cli(a) for a in _cli_inputs(9090, 10_000)]
    assert {"ok", "config-error", "exit-2"} <= set(kinds)
