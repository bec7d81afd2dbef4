"""Shared fixtures: the `schedlab` binary the results are compared with, and a helper that
runs it and returns its stdout (or its error message)."""

import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli():
    """Runs the CLI (`$SCHEDLAB_BIN`, else target/release/schedlab); returns (rc, stdout, stderr)."""
    binary = pathlib.Path(os.environ.get("SCHEDLAB_BIN", REPO / "target/release/schedlab"))
    if not binary.is_file():
        pytest.fail(f"{binary} is missing: run `cargo build --release --bin schedlab` first")

    def call(*args):
        p = subprocess.run(
            [str(binary), *args], capture_output=True, text=True, cwd=REPO, timeout=600
        )
        return p.returncode, p.stdout, p.stderr

    return call


@pytest.fixture(scope="session")
def cli_json(cli):
    def call(*args):
        rc, out, err = cli(*args)
        assert rc == 0, err
        return out, json.loads(out)

    return call


@pytest.fixture(scope="session")
def cli_error(cli):
    """The message of a CLI error, without its `schedlab: error: ` prefix."""

    def call(*args):
        rc, _, err = cli(*args)
        assert rc == 2, (rc, err)
        lines = [l for l in err.splitlines() if l.startswith("schedlab: error: ")]
        assert lines, err
        return err[err.index("schedlab: error: ") + len("schedlab: error: "):].rstrip("\n")

    return call
