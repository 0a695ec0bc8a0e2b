"""A third-party OpenMolt plugin used by the tests: the weather integration and the echo provider."""
