"""The frontend's passes over the sqlglot tree, one module each, in order.

Tree passes run once over the whole query (its subqueries included), select
passes on each SELECT just before it is built into a `Query`; every pass takes
the tree and the `Context` and returns the rewritten tree.
"""
