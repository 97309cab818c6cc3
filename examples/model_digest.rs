//! Golden model digests: one line per case (method × loss × step rule × weights × validation,
//! plus subsampling, constraints, categorical and leaf-wise variants), the trained model and its
//! history hashed. A change that must not alter results must reproduce every line.
//!
//! ```text
//! cargo run --release --example model_digest -- --check             # against the committed reference
//! cargo run --release --example model_digest -- --check FILE        # against another reference
//! cargo run --release --example model_digest -- --write FILE [rows] [iterations]
//! cargo run --release --example model_digest -- [rows] [iterations] [--full]
//! ```
//! The committed references are tests/data/model_digests.txt (40 000 rows, 6 iterations: about a
//! minute; enough rows that the row-parallel passes split into several chunks) and
//! tests/data/model_digests_small.txt (checked by `cargo test --test model_digest`).
//! `--full` prints each case's hashed text instead of its hash, to see what changed.

mod digest_cases;

use std::process::ExitCode;

const REFERENCE: &str = "tests/data/model_digests.txt";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let full = args.iter().any(|a| a == "--full");
    let flag_value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .map(|i| args.get(i + 1).filter(|v| !v.starts_with("--")).cloned())
    };
    let check = flag_value("--check");
    let write = flag_value("--write");
    let file_args: Vec<&String> = [&check, &write].into_iter().flatten().flatten().collect();
    let mut numbers = args
        .iter()
        .filter(|a| !a.starts_with("--") && !file_args.contains(a));
    let rows: Option<usize> = numbers.next().map(|a| a.parse().expect("rows: an integer"));
    let iterations: Option<usize> = numbers
        .next()
        .map(|a| a.parse().expect("iterations: an integer"));

    if let Some(path) = check {
        let path = path.unwrap_or_else(|| REFERENCE.to_string());
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("cannot read {path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let Some((rows, iterations)) = text.lines().next().and_then(digest_cases::parse_header)
        else {
            eprintln!("{path}: the first line is not a digest header");
            return ExitCode::FAILURE;
        };
        let reference: Vec<String> = text
            .lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .map(String::from)
            .collect();
        let actual = digest_cases::digest_lines(rows, iterations);
        let differences = digest_cases::differences(&reference, &actual);
        for d in &differences {
            println!("{d}");
        }
        println!(
            "{} of {} cases differ from {path} (rows={rows}, iterations={iterations})",
            differences.len(),
            reference.len()
        );
        return if differences.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }

    let rows = rows.unwrap_or(40_000);
    let iterations = iterations.unwrap_or(6);
    if let Some(path) = write {
        let path = path.unwrap_or_else(|| REFERENCE.to_string());
        let mut text = digest_cases::header(rows, iterations) + "\n";
        for line in digest_cases::digest_lines(rows, iterations) {
            text += &line;
            text += "\n";
        }
        std::fs::write(&path, text).expect("write the reference file");
        return ExitCode::SUCCESS;
    }
    digest_cases::for_each_case(rows, iterations, |label, text| {
        if full {
            println!("{label}: {text}");
        } else {
            println!("{label}: {:016x}", digest_cases::fnv1a(&text));
        }
    });
    ExitCode::SUCCESS
}
