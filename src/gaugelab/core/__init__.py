"""The engine's ground floor: numerics (runtime, portable), records and sealed files, the config
schema, progress lines and the factorisation's gauge action (gauge). It imports no experiment,
so every other layer may build on it (tests/test_layering.py; config's two checks that still do
are listed there as pending)."""
