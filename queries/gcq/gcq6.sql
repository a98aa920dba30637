-- GCQ6: free-connex projection of GCQ4 (S's columns). Paper stream: 21k events.
SELECT d, e, f, s.k FROM s, t WHERE s.k = t.k AND e < g;
