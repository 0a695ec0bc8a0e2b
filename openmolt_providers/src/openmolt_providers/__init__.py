"""OpenMolt's model providers: OpenAI, Anthropic and Google Gemini, over raw httpx.

Each provider is a plugin found through the ``openmolt.providers`` entry point
(``openai``, ``anthropic``, ``google``, and the local servers ``ollama``, ``lmstudio``, ``vllm`` and
``llamacpp``: `openmolt_providers.local`); the core never imports them. Importing this package loads
no provider.
"""

from __future__ import annotations

from openmolt_providers._common import ModelConfigWarning

__all__ = ["ModelConfigWarning"]
