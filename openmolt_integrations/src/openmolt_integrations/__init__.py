"""The built-in integrations of OpenMolt: one module per service, each found through its entry point."""
