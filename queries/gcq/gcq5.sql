-- GCQ5: free-connex projection of GCQ1. Paper stream: 2.7k events.
SELECT a, b, d, e FROM r, s, t WHERE a < d AND e < g;
