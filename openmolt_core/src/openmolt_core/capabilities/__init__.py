"""The features that attach to runs as capabilities (`openmolt_core.hooks.Capability`).

Each module holds one feature and what builds it from ``create_agent``'s keyword options; the
loop never imports them. See docs/guides/capabilities.md and Architecture.md.
"""

__all__: list[str] = []
