//! Trained models are bit-identical to the committed reference (tests/data/model_digests_small.txt,
//! written by `cargo run --release --example model_digest -- --write
//! tests/data/model_digests_small.txt 300 4`): every method × loss × step rule case, plus
//! subsampling, constraints, categorical and leaf-wise variants. A failure lists the cases that
//! changed; rerun the example with `--full` before and after to see how.

#[path = "../examples/digest_cases/mod.rs"]
mod digest_cases;

#[test]
fn models_match_the_committed_digests() {
    let text = include_str!("data/model_digests_small.txt");
    let (rows, iterations) = digest_cases::parse_header(text.lines().next().unwrap())
        .expect("the reference starts with its header");
    assert_eq!(
        digest_cases::header(rows, iterations),
        text.lines().next().unwrap()
    );
    let reference: Vec<String> = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect();
    assert!(reference.len() > 500, "the reference covers the grid");
    let differences =
        digest_cases::differences(&reference, &digest_cases::digest_lines(rows, iterations));
    assert!(
        differences.is_empty(),
        "{} of {} cases differ:\n{}",
        differences.len(),
        reference.len(),
        differences.join("\n")
    );
}
