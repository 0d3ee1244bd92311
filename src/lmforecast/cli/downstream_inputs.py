"""Inputs of `lmforecast downstream` beside its tables: chance levels (`--chance`,
`--chance-file`), a known model as the forecast point (`--model`), and the text of a
`predict --table` (the library computes; these only read flags and format)."""

from __future__ import annotations

import math
import warnings

from ..errors import InputError


def check_chance(chance):
    if chance is not None and not (math.isfinite(chance) and 0 <= chance < 100):
        raise InputError(f"--chance must be in [0, 100) points, got {chance}")
    if chance is not None and 0 < chance < 1:  # likely a fraction: say how it is read
        warnings.warn(
            f"--chance {chance:g} is read in points ({chance:g} of 100); for a "
            f"fraction give --chance {100 * chance:g}",
            stacklevel=2,
        )
    return chance


def task_chances(text, tasks: list[str], chance_file: str | None = None):
    """--chance (P for one task, or TASK=P[,TASK=P], repeatable) and --chance-file: a level
    per task named (tasks not named keep their bundled level), or None when neither is given;
    a bare P for several tasks would override every task's own level: refused. Task names are
    matched ignoring case."""
    items = [text] if isinstance(text, str) else list(text or [])
    out: dict[str, float] = {}
    if chance_file is not None:
        from ..downstream.chance import read_chance_file

        for name, v in read_chance_file(chance_file).items():
            hit = [t for t in tasks if t.casefold() == name.casefold()]
            if hit:  # a file may list more tasks than this run uses
                out[hit[0]] = check_chance(v)
    for item in items:
        if "=" not in item:
            try:
                value = float(item)
            except ValueError:
                raise InputError(f"--chance: {item!r} is not a number (or TASK=P)") from None
            if len(tasks) > 1:
                raise InputError(
                    f"--chance {item} with {len(tasks)} tasks would replace each "
                    "task's own chance level; give --chance TASK=P"
                )
            out[tasks[0]] = check_chance(value)
            continue
        for part in item.split(","):
            name, _, val = part.partition("=")
            hit = [t for t in tasks if t.casefold() == name.strip().casefold()]
            if not hit:
                raise InputError(
                    f"--chance: {name.strip()!r} is not one of --task ({', '.join(tasks)})"
                )
            try:
                out[hit[0]] = check_chance(float(val))
            except ValueError:
                raise InputError(
                    f"--chance: {val.strip()!r} for {name.strip()!r} is not a number"
                ) from None
    return out or None


def model_point_args(args, est) -> None:
    """--model NAME: --params and --tokens from the models registry (refused beside them)."""
    from ..downstream.batch import model_point

    if getattr(args, "flops", None) is not None or getattr(args, "params", None) is not None:
        raise InputError("give --model, or --flops, or --params/--tokens: one of them")
    toks = getattr(args, "tokens", None)
    if isinstance(toks, tuple) and len(toks) > 1:
        raise InputError("--model with --tokens takes one token count (or none: the final)")
    toks = toks[0] if isinstance(toks, tuple) else toks
    at = model_point(est, args.model, getattr(args, "models", None), toks)
    args.model, args.params, args.tokens = at["model"], at["N"], at["D"]
