//! Workload input that would never end or exhaust memory is refused when the workload is
//! built, with a message naming the task, key or parameter and the bound (such a run would
//! hang the sweep it is part of or take the machine down): forever loops without a duration, fork cycles, channel and task counts, loops ×
//! tasks, times beyond the clock, working sets beyond memory, and model scale parameters.

mod common;

use common::*;
use schedlab_workloads::{instantiate, parse_spec};

fn temp(text: &str, ext: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("w.{ext}"));
    std::fs::write(&p, text).unwrap();
    (dir, p.to_string_lossy().into_owned())
}

fn err(kind: &str, text: &str) -> String {
    let ext = if kind == "file" { "toml" } else { "json" };
    let (_d, p) = temp(text, ext);
    match instantiate(&parse_spec(&format!("{kind}:{p}")).unwrap(), &quad()) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn ok(kind: &str, text: &str) {
    let ext = if kind == "file" { "toml" } else { "json" };
    let (_d, p) = temp(text, ext);
    if let Err(e) = instantiate(&parse_spec(&format!("{kind}:{p}")).unwrap(), &quad()) {
        panic!("expected {text} to be accepted: {e}");
    }
}

fn spec_err(spec: &str) -> String {
    match instantiate(&parse_spec(spec).unwrap(), &quad()) {
        Ok(_) => panic!("expected {spec} to be refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn rtapp_one_forever_task_among_finite_ones_is_refused_without_a_duration() {
    let m = err(
        "rtapp",
        r#"{ "tasks": { "finite": { "loop": 3, "run": 100 },
                        "forever": { "loop": -1, "run": 100, "sleep": 100 } } }"#,
    );
    assert!(
        m.contains("task forever loops forever") && m.contains("duration"),
        "{m}"
    );
    // A phase looping forever inside a finite task, too.
    let m = err(
        "rtapp",
        r#"{ "tasks": { "t": { "loop": 1, "phases": { "p": { "loop": -1, "run": 10 } } } } }"#,
    );
    assert!(m.contains("task t loops forever"), "{m}");
    // With a global duration the same file is a bounded run.
    ok(
        "rtapp",
        r#"{ "tasks": { "finite": { "loop": 3, "run": 100 },
                        "forever": { "loop": -1, "run": 100, "sleep": 100 } },
             "global": { "duration": 1 } }"#,
    );
}

#[test]
fn toml_forever_loop_without_duration_is_refused_unless_it_exits() {
    let m = err(
        "file",
        r#"
[[task]]
name = "spin"
program = [ { op = "loop", count = "forever", body = [ { op = "compute", time = "1us" } ] } ]
"#,
    );
    assert!(
        m.contains("task 'spin' loops forever and the workload has no duration"),
        "{m}"
    );
    // The whole-program `loop = "forever"` form.
    let m = err(
        "file",
        "[[task]]\nname = \"t\"\nloop = \"forever\"\nprogram = [ { op = \"yield\" } ]\n",
    );
    assert!(m.contains("task 't' loops forever"), "{m}");
    // An exit in the body ends the loop on its first pass.
    ok(
        "file",
        r#"
[[task]]
name = "once"
program = [ { op = "loop", count = "forever", body = [ { op = "compute", time = "1us" }, { op = "exit" } ] } ]
"#,
    );
}

#[test]
fn zero_time_forever_loop_is_refused_even_with_a_duration() {
    let m = err(
        "file",
        r#"
duration = "1s"
[[task]]
name = "counter"
program = [ { op = "loop", count = "forever", body = [ { op = "count", counter = "c" } ] } ]
"#,
    );
    assert!(m.contains("zero simulated time"), "{m}");
}

#[test]
fn a_task_forking_its_own_template_is_refused() {
    let m = err(
        "file",
        r#"
duration = "1s"
[[task]]
name = "bomb"
program = [ { op = "fork", task = "bomb" }, { op = "compute", time = "1us" } ]
"#,
    );
    assert!(m.contains("task 'bomb' forks its own template"), "{m}");
    let m = err(
        "file",
        r#"
duration = "1s"
[[task]]
name = "a"
program = [ { op = "fork", task = "b" } ]
[[task]]
name = "b"
start = false
program = [ { op = "fork", task = "a" } ]
"#,
    );
    assert!(m.contains("cycle (a → b → a)"), "{m}");
    // rt-app's fork event, the same rule.
    let m = err(
        "rtapp",
        r#"{ "tasks": { "main": { "loop": 1, "fork": "p" },
                        "p": { "loop": 1, "fork": "p", "run": 10 } },
             "global": { "duration": 1 } }"#,
    );
    assert!(m.contains("task 'p' forks its own template"), "{m}");
}

#[test]
fn forks_are_counted_through_loops() {
    let m = err(
        "file",
        r#"
[[task]]
name = "parent"
program = [ { op = "fork", task = "kid", count = 1000000 }, { op = "wait_children" } ]
[[task]]
name = "kid"
start = false
program = [ { op = "compute", time = "1us" } ]
"#,
    );
    assert!(m.contains("1000001 tasks") && m.contains("200000"), "{m}");
    let m = err(
        "file",
        r#"
duration = "1s"
[[task]]
name = "parent"
program = [ { op = "fork", task = "kid", count = "forever" } ]
[[task]]
name = "kid"
start = false
program = [ { op = "compute", time = "1us" } ]
"#,
    );
    assert!(m.contains("forks 'kid' inside a forever loop"), "{m}");
}

#[test]
fn channel_and_task_counts_are_bounded_before_allocation() {
    let m = err(
        "file",
        r#"
[[channel]]
name = "c{i}"
kind = "pipe"
count = 100000000
[[task]]
name = "t"
program = [ { op = "compute", time = "1us" } ]
"#,
    );
    assert!(
        m.contains("100000000 channels is more than the 200000 allowed"),
        "{m}"
    );
    // Counts whose sum overflows a u64.
    let task = |n: &str| {
        format!(
            "[[task]]\nname = \"{n}\"\ncount = 9223372036854775807\nprogram = [ {{ op = \"yield\" }} ]\n"
        )
    };
    let m = err("file", &(task("a") + &task("b") + &task("c")));
    assert!(m.contains("more than the 200000 allowed"), "{m}");
}

#[test]
fn loops_times_tasks_are_bounded_without_a_duration() {
    let m = err(
        "file",
        r#"
[[task]]
name = "t"
count = 1000
program = [ { op = "loop", count = 100000000, body = [ { op = "compute", time = "1us" } ] } ]
"#,
    );
    assert!(
        m.contains("would execute") && m.contains("10000000000"),
        "{m}"
    );
}

#[test]
fn ws_kb_and_times_beyond_their_ranges_are_refused_with_a_location() {
    let m = err(
        "file",
        "[[task]]\nname = \"big\"\nws_kb = 9223372036854775807\nprogram = [ { op = \"compute\", time = \"1us\" } ]\n",
    );
    assert!(m.contains("line 2") && m.contains("ws_kb"), "{m}");
    let m = err(
        "file",
        "[[task]]\nname = \"s\"\nprogram = [ { op = \"sleep\", time = \"18446744073709551615ns\" } ]\n",
    );
    assert!(
        m.contains("line 3") && m.contains("longer than the 1 h"),
        "{m}"
    );
    let m = err(
        "file",
        "duration = \"100000m\"\n[[task]]\nname = \"s\"\nprogram = [ { op = \"yield\" } ]\n",
    );
    assert!(m.contains("line 1") && m.contains("longer than"), "{m}");
    let m = err(
        "rtapp",
        r#"{ "tasks": { "t": { "loop": 1, "sleep": 18446744073709551615 } } }"#,
    );
    assert!(m.contains("t.sleep") && m.contains("longer than"), "{m}");
    let m = err(
        "rtapp",
        r#"{ "tasks": { "t": { "loop": 1, "run": 1 } }, "global": { "duration": 9223372036854775807 } }"#,
    );
    assert!(m.contains("global.duration") && m.contains("longer"), "{m}");
}

#[test]
fn model_scale_parameters_are_bounded() {
    let m = spec_err("kernbench:scale=1e300");
    assert!(m.contains("scale=1e300") && m.contains("between"), "{m}");
    // 100000 pairs × the default 100000 round trips: far beyond an hour.
    let m = spec_err("pipe:pairs=100000");
    assert!(m.contains("would execute"), "{m}");
    let m = spec_err("hackbench:loops=1000000000000");
    assert!(m.contains("would execute"), "{m}");
    // The defaults stay well inside.
    for s in [
        "pipe",
        "hackbench",
        "kernbench",
        "pipe:pairs=100,loops=1000",
    ] {
        instantiate(&parse_spec(s).unwrap(), &quad()).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
}
