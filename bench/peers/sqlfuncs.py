"""SQL functions the peers' rendered expressions call (the generated
modules' helpers of the same names, templates/module.py.jinja)."""

from __future__ import annotations

import datetime


def div(a, b):
    return None if b == 0 else a / b


def mod(a, b):
    if b == 0:
        return None
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def add_months(date, months):
    total = date.year * 12 + date.month - 1 + months
    year, month = divmod(total, 12)
    for day in (date.day, 30, 29, 28):
        try:
            return datetime.date(year, month + 1, day)
        except ValueError:
            continue
