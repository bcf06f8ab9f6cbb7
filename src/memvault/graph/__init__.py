"""The entity graph: files, functions, libraries, errors, concepts and decisions that
sessions and fragments mention, and how they relate.

This package holds the graph's model only, imported from ``model``: its kinds, relations,
node ids and the bounds every query on it keeps. It is a derived catalog, rebuilt from the
event log and the vault at will: the entities are derived offline and deterministically
(``memvault.derive.entities``), the pipeline's graph job stores them, and the store keeps
them indexed.
"""
