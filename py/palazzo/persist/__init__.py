"""Keeping palaces: byte stores (:mod:`~palazzo.persist.storage`), the CRC'd journal
(:mod:`~palazzo.persist.journal`), snapshot + journal for one palace
(:mod:`~palazzo.persist.palacestore`), many palaces (:mod:`~palazzo.persist.library`) and a
palace directory on disk (:mod:`~palazzo.persist.directory`)."""
