"""Search: the CJK-aware analyzer, the index (documents, lexical and vectors), fusion and
ranking, and context packing."""
