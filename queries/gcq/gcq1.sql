-- GCQ1: full 3-way inequality chain, R ⋈[a<d] S ⋈[e<g] T. Paper stream: 12k events.
-- The exact paper texts are not available here; GCQ1–GCQ8 are reconstructed
-- from their shapes (a<d, e<g / d<g, S.k = T.k, projections).
SELECT * FROM r, s, t WHERE a < d AND e < g;
