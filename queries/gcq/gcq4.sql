-- GCQ4: equality plus inequality, S ⋈[S.k = T.k, e<g] T. Paper stream: 21k events.
SELECT * FROM s, t WHERE s.k = t.k AND e < g;
