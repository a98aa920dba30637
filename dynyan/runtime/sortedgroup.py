"""`_SortedGroup`: the index of a node on an inequality edge."""

from operator import itemgetter

from sortedcontainers import SortedKeyList

from .payload import _padd, _pcount


class _SortedGroup:
    """Tuples with payloads, ordered on one variable for range scans (an
    index on an inequality edge)."""

    __slots__ = ("mults", "order")

    def __init__(self):
        self.mults = {}
        self.order = SortedKeyList(key=itemgetter(0))

    def add(self, value, entry, d):
        """Add payload d to entry's; returns whether any entry is left."""
        old = self.mults.get(entry)
        if old is None:
            self.mults[entry] = d
            self.order.add((value, entry))
        else:
            new = _padd(old, d)
            if _pcount(new):
                self.mults[entry] = new
            else:
                del self.mults[entry]
                self.order.remove((value, entry))
        return bool(self.mults)

    def get(self, entry):
        return self.mults.get(entry)

    def scan(self, lo, lo_incl, hi, hi_incl):
        """(entry, payload) with lo <(=) value <(=) hi, in order."""
        mults = self.mults
        for _, entry in self.order.irange_key(lo, hi, (lo_incl, hi_incl)):
            yield entry, mults[entry]

    def __getstate__(self):
        return (self.mults, list(self.order))

    def __setstate__(self, state):
        self.mults = state[0]
        self.order = SortedKeyList(state[1], key=itemgetter(0))
