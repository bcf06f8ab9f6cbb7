"""Search: text analysis (CJK-aware), and the similarity used to deduplicate memories."""
