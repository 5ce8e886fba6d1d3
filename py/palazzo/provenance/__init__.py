"""The provenance kernel: deterministic, HMAC-signed context slices over a conversation DAG,
their policies and keys, and PROV-JSON export."""
