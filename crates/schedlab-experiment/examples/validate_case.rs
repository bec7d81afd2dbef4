//! Runs validation cases from the library (the CLI's `schedlab validate` is the user entry point):
//! `cargo run --release -p schedlab-experiment --example validate_case -- R1 quick`.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "quick");
    let cases: Vec<String> = args.into_iter().filter(|a| a != "quick").collect();
    let o = schedlab_experiment::validate::ValidateOptions {
        quick,
        jobs: 2,
        progress: false,
    };
    match schedlab_experiment::validate::run_cases(&cases, &o) {
        Ok(rs) => {
            for r in rs {
                println!("== {} {}", r.name, r.description);
                print!("{}", r.tables);
                for c in r.checks {
                    println!(
                        "  [{}] {} :: {}",
                        if c.pass { "PASS" } else { "FAIL" },
                        c.name,
                        c.detail
                    );
                }
            }
        }
        Err(e) => eprintln!("error: {e}"),
    }
}
