//! Every public item of the crate is documented: `cargo rustdoc --lib -- -D missing-docs` passes
//! (lib.rs warns on `missing_docs`, so that an undocumented item shows in every build without
//! failing it; this test fails it).

use std::process::Command;

#[test]
fn every_public_item_is_documented() {
    let output = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["rustdoc", "--lib", "--quiet", "--", "-D", "missing-docs"])
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let undocumented = stderr.matches("missing documentation").count();
    assert!(
        output.status.success() && undocumented == 0,
        "{undocumented} public items lack documentation:\n{stderr}"
    );
}
