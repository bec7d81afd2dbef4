"""The module itself: help() shows types and docstrings, the typing files ship, a panic in
the simulator is an exception rather than an abort."""

import inspect
import pathlib
import pydoc

import pytest

import schedlab
from schedlab import _schedlab

FUNCTIONS = ["compare", "run", "explain", "validate", "topologies", "topology", "policies",
             "workloads"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_help_shows_types_and_docs(name):
    f = getattr(schedlab, name)
    assert f.__doc__ and len(f.__doc__) > 80
    sig = inspect.signature(f)
    assert sig.return_annotation is not inspect.Signature.empty
    text = pydoc.render_doc(f, renderer=pydoc.plaintext)
    assert f.__doc__.strip().splitlines()[0] in text
    # the native function behind it has a signature and a docstring too
    if hasattr(_schedlab, name):
        native = getattr(_schedlab, name)
        assert native.__doc__ and native.__text_signature__


def test_result_classes_are_documented():
    for cls in (schedlab.Comparison, schedlab.Run, schedlab.Explanation):
        assert "Attributes:" in cls.__doc__
    assert "DataFrame" in schedlab.__doc__
    assert set(schedlab.__all__) >= set(FUNCTIONS) | {"SchedlabError"}


def test_typing_files_are_installed():
    pkg = pathlib.Path(schedlab.__file__).parent
    assert (pkg / "py.typed").is_file()
    stub = (pkg / "_schedlab.pyi").read_text()
    for name in FUNCTIONS:
        if hasattr(_schedlab, name):
            assert f"def {name}(" in stub, name


def test_abi3_extension():
    assert pathlib.Path(_schedlab.__file__).name.endswith(".abi3.so")


def test_a_panic_is_a_runtime_error_and_the_module_lives_on():
    with pytest.raises(RuntimeError, match="internal error.*a test panic"):
        _schedlab._panic_in_worker()
    assert len(schedlab.compare(workload="tbench:clients=2,duration=20ms", reps=2).runs) == 4
