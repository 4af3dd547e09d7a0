"""The library: the harness's built-in pipelines, one module each. A module defining ``SCENARIO`` is registered
by existing (:func:`scenarios.all_scenarios` scans this package). "correct" pipelines must pass every schedule;
"broken" ones are known at-least-once and must be flagged under the right fault.

The catalogue is docs/scenarios.md's, written from each ``SCENARIO``'s own fields by ``python -m
harness.cli.catalogue --write`` (``python -m harness list`` prints the same); each module's docstring states
its purpose, faults, guarantee, pass condition and requirements. The framework these are built from
(``Scenario``, sources, row generation, the tap, presets, the sinks they share) lives in the parent package
:mod:`scenarios`.
"""
