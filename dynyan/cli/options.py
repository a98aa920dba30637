"""Options and argument types shared by the command groups."""

from __future__ import annotations

import argparse


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text}")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {text}")
    return value


def non_negative_int(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text}")
    return value


def data_dir_option(p) -> None:
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help="where datasets and streams live (default: $DYNYAN_DATA_DIR or ./data)",
    )


def chunk_events_option(p) -> None:
    from ..pipeline.streams import DEFAULT_CHUNK_EVENTS

    p.add_argument(
        "--chunk-events",
        type=positive_int,
        default=DEFAULT_CHUNK_EVENTS,
        metavar="N",
        help="events per chunk (seq range per file), default %(default)s",
    )
