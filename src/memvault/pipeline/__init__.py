"""The processing pipeline's jobs and triggers: bringing a session's summary, fragments,
compressed observations and graph up to date from its captured events.

Triggers queue jobs; the worker runs them one at a time under its gate. Each job reads the
events past its watermark (``window``), hands them to the pure derivations of
``memvault.derive`` (or to the LLM, ``llm_tasks``), and writes what they return with the
moved watermark. ``service.Pipeline`` puts the jobs together for ``Memory``.
"""
