"""Payload arithmetic of the runtime helpers.

A payload is an int count (width 1) or a tuple (count, channel 1, …) whose
entries add element-wise (`dynyan.compiler.render.Ring`). The helpers spell
payload arithmetic as calls to the functions below; when the renderer
inlines a helper into a generated module it replaces every such call by the
expression for that module's width (`a + b`, or `(a[0] + b[0], a[1] + b[1])`),
so the hot paths pay no call. Imported as they are, these definitions are
the int ones.
"""

_ZERO = 0  # the payload of nothing; a generated module defines its own


def _padd(a, b):
    """The sum of two payloads."""
    return a + b


def _psub(a, b):
    """The difference of two payloads."""
    return a - b


def _pcount(p):
    """The count of a payload (its first entry); zero means absent."""
    return p


def _psum(payloads):
    """The sum of a list of payloads (`sum` where payloads are ints)."""
    return sum(payloads)


# Inlined as `_psum` where payloads are tuples (`inline.HELPERS`).
def _psum_tuples(payloads):
    """The element-wise sum of payload tuples."""
    return tuple(map(sum, zip(*payloads))) if payloads else _ZERO
