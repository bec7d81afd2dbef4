"""Types of the native module ``schedlab._schedlab`` (use the ``schedlab`` package's functions,
which wrap these and build the DataFrames). Each returns the CLI's ``--json`` text or plain
columns; each raises ``SchedlabError`` with the CLI's message."""

from typing import Any, Dict, List, Optional, Sequence, Tuple

class SchedlabError(Exception):
    """Bad input or a failed run; the message is the one the ``schedlab`` command prints."""

def compare(
    topo: Optional[str] = None,
    workload: Optional[str] = None,
    variants: Sequence[str] = ...,
    sweep: Sequence[str] = ...,
    reps: Optional[int] = None,
    seed: Optional[int] = None,
    file: Optional[str] = None,
    profile: Optional[str] = None,
    smt: Optional[int] = None,
    llc_per_node: Optional[int] = None,
    until_ci: Optional[float] = None,
    max_reps: Optional[int] = None,
    min_effect: Optional[float] = None,
    jobs: Optional[int] = None,
    force: bool = False,
    explain: bool = False,
    sensitivity: bool = False,
) -> Tuple[str, str, Optional[str]]:
    """``(compare --json text, runs JSON array, explain --json text or None)``."""

def run(
    topo: Optional[str] = None,
    workload: Optional[str] = None,
    variant: Optional[str] = None,
    reps: Optional[int] = None,
    seed: Optional[int] = None,
    profile: Optional[str] = None,
    smt: Optional[int] = None,
    llc_per_node: Optional[int] = None,
    trace: bool = False,
) -> List[Dict[str, Any]]:
    """One dict per repetition: ``record`` (JSON text), ``counters``, ``counters_text``,
    ``wake_graph_text``, ``schedstat`` and, for the first with ``trace``, ``trace`` columns."""

def validate(cases: Sequence[str] = ..., quick: bool = False, jobs: Optional[int] = None) -> str:
    """``schedlab validate --json`` text."""

def topologies() -> str:
    """The presets as a JSON array."""

def topology(spec: str, smt: Optional[int] = None, llc_per_node: Optional[int] = None) -> str:
    """``schedlab topo show SPEC --json`` text."""

def policies(name: Optional[str] = None) -> str:
    """The presets, or one preset's switches, as a JSON array."""

def workloads(name: Optional[str] = None) -> str:
    """``schedlab workloads [NAME] --json`` text."""

def _panic_in_worker() -> None:
    """Test only: a panic on the worker thread, which must raise ``RuntimeError``."""
