-- GCQ7: not free-connex projection of GCQ1 (a and g meet only through S).
-- Paper stream: 2.7k events.
SELECT a, g FROM r, s, t WHERE a < d AND e < g;
