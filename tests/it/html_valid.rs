//! The HTML of a real run's report and of `compare --html` across two
//! stores pass the `tidy` validator with no errors and no warnings, and
//! load nothing from the network.

use crate::support::run::Lab;
use crate::support::{run, stderr};
use std::path::Path;
use std::process::Command;

/// `tidy -errors -q FILE`: no output and exit status 0 (1 is warnings,
/// 2 errors).
fn assert_tidy(file: &Path) {
    let out = Command::new("tidy")
        .args(["-errors", "-q"])
        .arg(file)
        .output()
        .expect("tidy is installed by scripts/setup.sh");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && said.trim().is_empty(),
        "tidy on {}: {said}",
        file.display()
    );
}

/// No URL but the SVG namespace.
fn assert_offline(html: &str) {
    let rest = html.replace("http://www.w3.org/2000/svg", "");
    for scheme in ["http://", "https://", "//cdn", "src=\"http"] {
        assert!(!rest.contains(scheme), "{scheme} in the page");
    }
}

fn lab() -> Lab {
    Lab::new(
        "[sweep]\nconnections = [1, 4, 16]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n\
         [[system]]\nlabel = \"nginx\"\nserver = { worker_processes = 1 }\n",
    )
}

#[test]
fn a_real_report_and_a_cross_store_comparison_validate() {
    let (a, b) = (lab(), lab());
    let html = a.dir.path().join("report.html");
    for lab in [&a, &b] {
        let out = lab.dir.path().join("report.html");
        let done = lab
            .run()
            .args(["-o", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(done.status.success(), "{}", stderr(&done));
    }
    let report = std::fs::read_to_string(&html).unwrap();
    assert!(report.contains("<svg"), "a report with charts");
    assert_tidy(&html);
    assert_offline(&report);

    let page = a.dir.path().join("compare.html");
    let (sa, sb) = (a.store.to_str().unwrap(), b.store.to_str().unwrap());
    let out = run(&[
        "compare",
        &format!("{sa}:1"),
        &format!("{sb}:1"),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&page).unwrap();
    assert_tidy(&page);
    assert_offline(&text);
    assert!(
        text.contains("s.sqlite:1 against s.sqlite:1"),
        "cross-store names"
    );
    assert!(text.contains(r#"<section id="verdict">"#) && text.contains("What differs"));
    assert_eq!(
        text.matches(r#"class="series""#).count(),
        2,
        "A and B overlaid"
    );
}
