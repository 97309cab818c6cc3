//! Seeded mutation fuzzing of model files: every mutated file must be rejected by
//! `Model::from_json`, or load and predict finite values, without a panic. Longer runs:
//! `cargo run --release --example fuzz_models -- --cases 100000`.

mod fuzz_support;

use fuzz_support::{base_models, check, mutate, probe_payloads, Outcome, Tally};
use serde_json::Value;

const SEED: u64 = 0x5eed_f11e;
const CASES_PER_MODEL: u64 = 600;

#[test]
fn mutated_model_files_are_rejected_or_predict_finite_values() {
    let bases = base_models();
    let parsed: Vec<Value> = bases
        .iter()
        .map(|(_, text)| serde_json::from_str(text).unwrap())
        .collect();
    // Panics are caught and counted; their messages would only clutter the output.
    std::panic::set_hook(Box::new(|_| {}));
    let mut tally = Tally::default();

    // The unmutated models load and predict; every probe payload is rejected.
    let as_trained: Vec<(String, Outcome)> = bases
        .iter()
        .map(|(name, text)| (name.to_string(), check(text)))
        .collect();
    let probes: Vec<(String, Outcome)> = probe_payloads(&parsed)
        .into_iter()
        .map(|(name, text)| (name, check(&text)))
        .collect();
    for ((name, _), base) in bases.iter().zip(&parsed) {
        for case in 0..CASES_PER_MODEL {
            let text = mutate(base, SEED, case);
            tally.add(&format!("{name} case {case}"), &check(&text));
        }
    }
    // Back to the default hook before anything may fail.
    let _ = std::panic::take_hook();
    for (name, outcome) in &as_trained {
        assert_eq!(outcome, &Outcome::Finite, "{name} as trained");
    }
    for (name, outcome) in &probes {
        assert_eq!(outcome, &Outcome::Rejected, "probe payload {name}");
    }
    eprintln!("outcomes: {:?}", tally.counts);
    assert!(
        tally.n_failures() == 0,
        "{} failures, the first: {:#?}",
        tally.n_failures(),
        &tally.failures[..tally.n_failures().min(5)]
    );
    // The mutations reach both sides: most files are rejected, but many still load and predict
    // (about a tenth).
    assert!(tally.counts["rejected"] > 1000, "{:?}", tally.counts);
    assert!(tally.counts["loaded+finite"] > 200, "{:?}", tally.counts);
}
