"""Property suite: the paper's identities (spec: shared/spec/identities.md, §1-§6)."""
