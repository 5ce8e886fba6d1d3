"""The provenance kernel: deterministic, HMAC-signed context slices over a conversation DAG,
their policies and keys, and PROV-JSON export.

- canonical: canonical JSON bytes and sha256, what every fingerprint is computed over
- policy: SlicePolicyV1 and the PolicyRegistry that names policies
- keys: key ids, signing keys and the Keyring of a palace
- records: the plain records of a slice (SliceTurn, SliceEdge, ProvenanceFields, Verdict)
- kernel: Provenance (slice, slice_many, sign, verify, admit), policy_weighted_bfs, token
  budgets, the sealed bundle
- prov: a bundle as a W3C PROV-JSON document
- forms: a bundle as messages, text or triples
- atlas: many slices at once: overlap, turn influence, the atlas bundle

Nothing is re-exported here: import a name from the module that defines it.
"""
