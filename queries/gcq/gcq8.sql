-- GCQ8: not free-connex projection of GCQ4. Paper stream: 21k events.
SELECT d, g FROM s, t WHERE s.k = t.k AND e < g;
