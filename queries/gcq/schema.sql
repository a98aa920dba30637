-- Synthetic relations of the IEDyn experiments (Idris et al., "Conjunctive
-- queries with inequalities under updates"): R(a,b,c), S(d,e,f,k), T(g,h,i,k).
CREATE TABLE r (a INTEGER, b INTEGER, c INTEGER);
CREATE TABLE s (d INTEGER, e INTEGER, f INTEGER, k INTEGER);
CREATE TABLE t (g INTEGER, h INTEGER, i INTEGER, k INTEGER);
