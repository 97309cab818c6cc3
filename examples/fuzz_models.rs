//! Long runs of the model-file mutation fuzzer of `tests/model_fuzz.rs`:
//!
//!     cargo run --release --example fuzz_models -- --cases 100000 --seed 1
//!     cargo run --release --example fuzz_models -- --seconds 600
//!
//! Prints the count of each outcome: rejected, loaded+finite, and the failures (loaded but no
//! frame fits / loaded, predict error / panic / non-finite / slow>10s), then the first failures;
//! exits with status 1 if there were any.
//! `--show-rejections` also prints the most frequent rejection messages.

#[path = "../tests/fuzz_support/mod.rs"]
mod fuzz_support;

use fuzz_support::{base_models, check, mutate, probe_payloads, Tally};
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};

struct Args {
    cases: Option<u64>,
    seconds: Option<f64>,
    seed: u64,
    show_rejections: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        cases: None,
        seconds: None,
        seed: 1,
        show_rejections: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--cases" => args.cases = Some(value()?.parse().map_err(|e| format!("--cases: {e}"))?),
            "--seconds" => {
                args.seconds = Some(value()?.parse().map_err(|e| format!("--seconds: {e}"))?)
            }
            "--seed" => args.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--show-rejections" => args.show_rejections = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.cases.is_none() && args.seconds.is_none() {
        args.cases = Some(10_000);
    }
    Ok(args)
}

/// The error of a rejected file, with numbers and quoted names blanked so that messages group.
fn rejection_kind(text: &str) -> String {
    let message = match optboost::Model::from_json(text) {
        Err(e) => e.to_string(),
        Ok(_) => return "(loaded)".into(),
    };
    let mut kind = String::new();
    let mut in_number = false;
    for ch in message.chars().take(90) {
        let digit = ch.is_ascii_digit();
        if digit && !in_number {
            kind.push('#');
        }
        if !digit {
            kind.push(ch);
        }
        in_number = digit;
    }
    kind
}

fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!(
                "{e}\nusage: fuzz_models [--cases N | --seconds T] [--seed S] [--show-rejections]"
            );
            std::process::exit(2);
        }
    };
    let started = Instant::now();
    let bases = base_models();
    let parsed: Vec<Value> = bases
        .iter()
        .map(|(_, text)| serde_json::from_str(text).expect("a trained model is valid JSON"))
        .collect();
    // Panics are caught and counted; the default hook would print each one.
    std::panic::set_hook(Box::new(|_| {}));
    let mut tally = Tally::default();
    for (name, text) in probe_payloads(&parsed) {
        tally.add(&format!("probe: {name}"), &check(&text));
    }
    let mut rejections: HashMap<String, usize> = HashMap::new();
    let deadline = args.seconds.map(|s| started + Duration::from_secs_f64(s));
    let mut case = 0u64;
    while args.cases.is_none_or(|n| case < n) && deadline.is_none_or(|d| Instant::now() < d) {
        let b = (case % bases.len() as u64) as usize;
        let text = mutate(&parsed[b], args.seed, case);
        let outcome = check(&text);
        if args.show_rejections && outcome == fuzz_support::Outcome::Rejected {
            *rejections.entry(rejection_kind(&text)).or_default() += 1;
        }
        tally.add(
            &format!("{} seed {} case {case}", bases[b].0, args.seed),
            &outcome,
        );
        case += 1;
    }
    let _ = std::panic::take_hook();
    println!(
        "{case} mutations + {} probe payloads, seed {}, {:.1} s",
        tally.counts.values().sum::<usize>() - case as usize,
        args.seed,
        started.elapsed().as_secs_f64()
    );
    for (label, count) in &tally.counts {
        println!("  {label:<24} {count}");
    }
    if args.show_rejections {
        let mut kinds: Vec<_> = rejections.into_iter().collect();
        kinds.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
        for (kind, count) in kinds.iter().take(25) {
            println!("  {count:>7}  {kind}");
        }
    }
    if tally.n_failures() > 0 {
        println!("{} failures; the first:", tally.n_failures());
        for failure in tally.failures.iter().take(10) {
            println!("  {failure}");
        }
        std::process::exit(1);
    }
}
