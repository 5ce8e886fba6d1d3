"""What the palace remembers besides drawers: the temporal knowledge graph
(:mod:`~palazzo.memory.kg`), conversation DAGs (:mod:`~palazzo.memory.conversation`), agent
diaries (:mod:`~palazzo.memory.diary`) and their AAAK shorthand (:mod:`~palazzo.memory.aaak`)."""
