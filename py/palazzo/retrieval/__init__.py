"""Finding drawers: the BM25 index (:mod:`~palazzo.retrieval.bm25`), rank fusion
(:mod:`~palazzo.retrieval.fusion`) and hybrid search (:mod:`~palazzo.retrieval.search`)."""
