"""Delta Lake in the harness: a pure reader of a table's ``_delta_log`` (:mod:`scenarios.delta.log`), the Delta
sinks the library's pipelines write through (:mod:`scenarios.delta.sinks`), a Delta table as a streaming source
(:mod:`scenarios.delta.source`) and the check run before a Delta run starts (:mod:`scenarios.delta.preflight`)."""
