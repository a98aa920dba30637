"""The TPC-H and TPC-DS schemas, shipped as the package `dynyan.tpch`."""
