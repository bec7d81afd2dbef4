"""Bad input raises `schedlab.SchedlabError` with the words the CLI prints for it."""

import pytest

import schedlab

W = "tbench:duration=30ms"

# (Python call, the same arguments to the CLI)
CASES = [
    (lambda: schedlab.compare(workload=W, variants=["linux-6.6", "linux-6.66"]),
     ["compare", "-w", W, "-v", "linux-6.6", "-v", "linux-6.66"]),
    (lambda: schedlab.compare(workload="tbnech"), ["compare", "-w", "tbnech"]),
    (lambda: schedlab.compare(workload="tbench:clients=x"), ["compare", "-w", "tbench:clients=x"]),
    (lambda: schedlab.compare(workload=W, variants=["linux-6.6", "linux-6.6,WAKE_AFFINE,NO_WAKE_AFFINE"]),
     ["compare", "-w", W, "-v", "linux-6.6", "-v", "linux-6.6,WAKE_AFFINE,NO_WAKE_AFFINE"]),
    (lambda: schedlab.compare(workload=W, variants=["linux-6.6", "linux-6.6"]),
     ["compare", "-w", W, "-v", "linux-6.6", "-v", "linux-6.6"]),
    (lambda: schedlab.compare(workload=W, sweep=["clients=1", "clients=2"]),
     ["compare", "-w", W, "--sweep", "clients=1", "--sweep", "clients=2"]),
    (lambda: schedlab.compare(workload=W, sweep={"clients": [1, 1]}),
     ["compare", "-w", W, "--sweep", "clients=1,1"]),
    (lambda: schedlab.compare(workload=W, sweep={"nosuch": [1]}),
     ["compare", "-w", W, "--sweep", "nosuch=1"]),
    (lambda: schedlab.compare(workload=W, reps=20000), ["compare", "-w", W, "--reps", "20000"]),
    (lambda: schedlab.compare(topo="nosuch-machine", workload=W),
     ["compare", "-t", "nosuch-machine", "-w", W]),
    (lambda: schedlab.compare(workload=W, max_reps=5), ["compare", "-w", W, "--max-reps", "5"]),
    (lambda: schedlab.compare(file="no/such/file.toml"), ["compare", "no/such/file.toml"]),
    (lambda: schedlab.explain(workload=W, variants=["linux-6.6"]),
     ["explain", "-w", W, "-v", "linux-6.6"]),
    (lambda: schedlab.run(workload="hackbench:groups=x"), ["run", "-w", "hackbench:groups=x"]),
    (lambda: schedlab.run(variant="linux-6.6,NO_SUCH_SWITCH"), ["run", "-v", "linux-6.6,NO_SUCH_SWITCH"]),
    (lambda: schedlab.policies("linux-9.99"), ["policies", "linux-9.99"]),
    (lambda: schedlab.workloads("tbnech"), ["workloads", "tbnech"]),
    (lambda: schedlab.topology("nosuch-machine"), ["topo", "show", "nosuch-machine"]),
    (lambda: schedlab.validate("R9"), ["validate", "R9"]),
]


@pytest.mark.parametrize("call,argv", CASES, ids=[" ".join(a) for _, a in CASES])
def test_same_message_as_the_cli(call, argv, cli_error):
    expected = cli_error(*argv)
    with pytest.raises(schedlab.SchedlabError) as e:
        call()
    assert str(e.value) == expected


@pytest.mark.parametrize("kw", [{"reps": -1}, {"seed": -3}, {"min_effect": 150}, {"jobs": 0}])
def test_out_of_range_numbers(kw):
    with pytest.raises(schedlab.SchedlabError) as e:
        schedlab.compare(workload=W, **kw)
    flag = "--" + next(iter(kw)).replace("_", "-")
    assert flag in str(e.value)


def test_wrong_types_are_type_errors():
    with pytest.raises(TypeError):
        schedlab.compare(workload=W, reps="three")
    with pytest.raises(TypeError):
        schedlab.run(variant=["linux-6.6"])


def test_error_class():
    assert issubclass(schedlab.SchedlabError, Exception)
    assert schedlab.SchedlabError.__doc__
