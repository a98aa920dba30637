-- GCQ3: star of inequalities on S.d: R ⋈[a<d] S ⋈[d<g] T. Paper stream: 2.7k events.
SELECT * FROM r, s, t WHERE a < d AND d < g;
