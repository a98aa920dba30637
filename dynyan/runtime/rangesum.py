"""`_RangeSum`: payloads at sorted values with sums over value ranges (the
weight of a node on an inequality edge, summed over the matching range)."""

from bisect import bisect_left, bisect_right

from .payload import _ZERO, _padd, _pcount, _psub, _psum


class _RangeNode:
    """A node of a _RangeSum tree: sorted keys and the payload under each (a
    leaf: values and their payloads; inside: each child's largest value and
    total payload, with the children in `kids`)."""

    __slots__ = ("keys", "sums", "kids")

    def __init__(self, keys, sums, kids=None):
        self.keys, self.sums, self.kids = keys, sums, kids


class _RangeSum:
    """Payloads at sorted values with sums over value ranges: a B-tree whose
    nodes keep each child's total, O(log n) per operation (a node scans at
    most 2 * FANOUT sums in C, there are log_FANOUT(n) levels)."""

    __slots__ = ("root",)
    FANOUT = 64

    def __init__(self):
        self.root = _RangeNode([], [])

    def add(self, value, d):
        """Add payload d at value; returns whether any payload is left."""
        path = []
        node = self.root
        while node.kids is not None:
            keys = node.keys
            i = bisect_left(keys, value)
            if i == len(keys):
                i -= 1
            path.append((node, i))
            sums = node.sums
            sums[i] = _padd(sums[i], d)
            node = node.kids[i]
        keys, sums = node.keys, node.sums
        j = bisect_left(keys, value)
        if j < len(keys) and keys[j] == value:
            new = _padd(sums[j], d)
            if _pcount(new):
                sums[j] = new
            else:
                del keys[j], sums[j]
        else:
            keys.insert(j, value)
            sums.insert(j, d)
        if path:  # drop emptied nodes, split full ones, keep largest values
            child = node
            for parent, i in reversed(path):
                if not child.keys:
                    del parent.keys[i], parent.sums[i], parent.kids[i]
                else:
                    parent.keys[i] = child.keys[-1]
                    if len(child.keys) > 2 * self.FANOUT:
                        self._split(parent, i)
                child = parent
            root = self.root
            while root.kids is not None and len(root.keys) == 1:
                root = self.root = root.kids[0]
        root = self.root
        if len(root.keys) > 2 * self.FANOUT:
            self.root = _RangeNode([root.keys[-1]], [_psum(root.sums)], [root])
            self._split(self.root, 0)
        return bool(self.root.keys)

    @staticmethod
    def _split(parent, i):
        """Split parent's child i in two halves."""
        child = parent.kids[i]
        half = len(child.keys) // 2
        kids = None if child.kids is None else child.kids[half:]
        right = _RangeNode(child.keys[half:], child.sums[half:], kids)
        del child.keys[half:], child.sums[half:]
        if kids is not None:
            del child.kids[half:]
        parent.keys[i : i + 1] = [child.keys[-1], right.keys[-1]]
        parent.sums[i : i + 1] = [_psum(child.sums), _psum(right.sums)]
        parent.kids.insert(i + 1, right)

    def below(self, value, inclusive):
        """Total payload at values < value (<= if inclusive)."""
        find = bisect_right if inclusive else bisect_left
        node = self.root
        total = _ZERO
        while True:
            i = find(node.keys, value)
            if i:
                part = _psum(node.sums[:i])
                total = _padd(total, part)
            if node.kids is None or i == len(node.keys):
                return total
            node = node.kids[i]

    def range(self, lo, lo_incl, hi, hi_incl):
        """Total payload at lo <(=) value <(=) hi; None is unbounded. An
        empty range (hi below lo: `c > d + 3 AND c < d + 1`) totals nothing."""
        if hi is None:
            total = _psum(self.root.sums)
        elif lo is not None and (hi < lo or (hi == lo and not (lo_incl and hi_incl))):
            return _ZERO
        else:
            total = self.below(hi, hi_incl)
        if lo is not None:
            low = self.below(lo, not lo_incl)
            total = _psub(total, low)
        return total

    def besides(self, value):
        """Total payload at values other than `value` (a <> edge)."""
        total = _psum(self.root.sums)
        at = self.range(value, True, value, True)
        return _psub(total, at)

    def __getstate__(self):
        return self.root

    def __setstate__(self, root):
        self.root = root
