"""`_SortedGroup`: the index of a node on an inequality edge."""

from bisect import bisect_left, bisect_right
from operator import itemgetter

from sortedcontainers import SortedKeyList

from .payload import _padd, _pcount


class _SortedGroup:
    """Tuples with payloads, ordered on one variable for range scans (an
    index on an inequality edge).

    Most groups hold a few entries (the orders of one customer), where a
    SortedKeyList costs more to build than its searches save: the order is a
    plain list kept sorted by bisection up to SMALL entries, and becomes a
    SortedKeyList (same order) when it outgrows that."""

    __slots__ = ("mults", "order")
    SMALL = 32
    _VALUE = itemgetter(0)  # an entry's place in the order: (value, entry)

    def __init__(self):
        self.mults = {}
        self.order = []

    def add(self, value, entry, d):
        """Add payload d to entry's; returns whether any entry is left."""
        mults = self.mults
        old = mults.get(entry)
        order = self.order
        if old is None:
            mults[entry] = d
            if order.__class__ is not list:
                order.add((value, entry))
            elif len(order) < self.SMALL:  # after its equals, as SortedKeyList
                i = bisect_right(order, value, key=self._VALUE)
                order.insert(i, (value, entry))
            else:
                self.order = SortedKeyList(order, key=self._VALUE)
                self.order.add((value, entry))
        else:
            new = _padd(old, d)
            if _pcount(new):
                mults[entry] = new
            else:
                del mults[entry]
                if order.__class__ is not list:
                    order.remove((value, entry))
                else:
                    i = bisect_left(order, value, key=self._VALUE)
                    del order[order.index((value, entry), i)]
        return bool(mults)

    def get(self, entry):
        return self.mults.get(entry)

    def scan(self, lo, lo_incl, hi, hi_incl):
        """(entry, payload) with lo <(=) value <(=) hi, in order."""
        mults = self.mults
        order = self.order
        if order.__class__ is not list:
            for _, entry in order.irange_key(lo, hi, (lo_incl, hi_incl)):
                yield entry, mults[entry]
            return
        key = self._VALUE
        i = 0
        if lo is not None:
            i = (bisect_left if lo_incl else bisect_right)(order, lo, key=key)
        j = len(order)
        if hi is not None:
            j = (bisect_right if hi_incl else bisect_left)(order, hi, key=key)
        for _, entry in order[i:j]:
            yield entry, mults[entry]

    def __getstate__(self):
        return (self.mults, list(self.order))

    def __setstate__(self, state):
        self.mults, order = state
        self.order = (
            order if len(order) <= self.SMALL else SortedKeyList(order, key=self._VALUE)
        )
