"""Faults to inject: plans as data and the code that fires them."""

from __future__ import annotations

from fault_injectors.crash import FaultSite, never_fired, read_ledger
from fault_injectors.hold import hold_for_sibling_fault
from fault_injectors.kills import kill_driver_groups
from fault_injectors.plan import (
    ALL_CRASH_POINTS,
    BOUNDARY_POINTS,
    CRASH_POINTS,
    PURGE_POINT,
    SNAPSHOT_POINT,
    STEP_POINT,
    TIMED_POINT,
    FaultPlan,
    FaultPlanError,
    FaultRule,
)

__all__ = [
    "ALL_CRASH_POINTS",
    "BOUNDARY_POINTS",
    "CRASH_POINTS",
    "PURGE_POINT",
    "SNAPSHOT_POINT",
    "STEP_POINT",
    "TIMED_POINT",
    "FaultPlan",
    "FaultPlanError",
    "FaultRule",
    "FaultSite",
    "hold_for_sibling_fault",
    "kill_driver_groups",
    "never_fired",
    "read_ledger",
]
