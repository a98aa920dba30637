-- GCQ2: 2-way inequality join R ⋈[a<d] S. Paper stream: 2.7k events.
SELECT * FROM r, s WHERE a < d;
