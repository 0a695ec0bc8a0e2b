"""The built-in integrations of OpenMolt: one module per service, each found through an entry point."""
