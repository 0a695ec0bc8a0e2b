"""The built-in integrations of OpenMolt, one module per service, found through entry points."""
