"""The ground floor: the palace's records and names (:mod:`~palazzo.core.model`), the
struct-of-arrays drawer and edge store (:mod:`~palazzo.core.columns`), chunking, JSON text
checks and the JSON Schema subset operations are validated with. Imports nothing above
:mod:`palazzo.errors`."""
