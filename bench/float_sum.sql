CREATE TABLE r (k INTEGER, w DOUBLE, v DOUBLE);
SELECT r.k, SUM(r.w * r.v) AS s, AVG(r.w) AS a FROM r GROUP BY r.k;
