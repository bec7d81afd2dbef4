"""examples/python_tour.py runs top to bottom and saves its plot."""

import subprocess
import sys

from conftest import REPO


def test_tour_runs_and_saves_the_plot(tmp_path):
    png = tmp_path / "tour.png"
    p = subprocess.run([sys.executable, str(REPO / "examples/python_tour.py"), str(png)],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot: {png}" in p.stdout
    assert "wakeups per target CPU:" in p.stdout
