-- Credit-card fraud pattern (Idris et al., IEDyn, Fig. 1a): on one account,
-- two small transactions followed by a large one, in increasing time order.
-- The one-hour window is not in the query: the stream deletes every
-- transaction one hour after it happened (dynyan stream synthetic fraud).
CREATE TABLE transactions (ts INTEGER, acc INTEGER, amnt DECIMAL(12, 2));

SELECT t1.acc, t1.ts AS ts1, t2.ts AS ts2, t3.ts AS ts3, t3.amnt
FROM transactions t1, transactions t2, transactions t3
WHERE t1.acc = t2.acc AND t2.acc = t3.acc
  AND t1.ts < t2.ts AND t2.ts < t3.ts
  AND t1.amnt < 100 AND t2.amnt < 100 AND t3.amnt > 1000;
