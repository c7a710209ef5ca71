"""The live testbed: the official openai SDK drives agent loops against an emulated Responses API.

The emulator (``app``, ``emulator``) speaks the Responses API over HTTP, SSE and
WebSocket mode on loopback; its stage delays come from ``models.costs`` applied to
what it processed, under asyncio pools sized like the scenario's.  The driver
(``driver``, ``fleet``) runs the agent loops through the SDK; ``comparison`` puts
what they measured beside the simulation of the same scenario.  Importing this
package needs the optional group ``testbed`` only where a module says so.
"""
