"""The diagnostic's one error type, so that every part can raise it without importing the others."""


class DiagnoseError(ValueError):
    """Bad input to the diagnostic: an optimizer that cannot be imported or is not one, an
    unknown testbed. The message names the offending value."""
