//! The HTML of a real run's report and of `compare --html` across two
//! stores pass the `tidy` validator with no errors and no warnings, and
//! load nothing from the network; text from a recipe never becomes markup.

use crate::support::run::Lab;
use crate::support::{run, stderr};
use std::path::Path;
use std::process::Command;

/// `tidy -errors -q FILE`: no output and exit status 0 (1 is warnings,
/// 2 errors).
pub(crate) fn assert_tidy(file: &Path) {
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

/// `compare --each-run A:1 B:1 --html PAGE` (the two runs share their
/// default label, so they are kept apart), which must succeed and pass
/// `tidy`; the page's text.
fn compare_page(a: &Path, b: &Path, page: &Path) -> String {
    compare_runs_page(
        &format!("{}:1", a.display()),
        &format!("{}:1", b.display()),
        page,
    )
}

/// [`compare_page`] of two runs given as `STORE:RUN`.
fn compare_runs_page(a: &str, b: &str, page: &Path) -> String {
    let out = run(&[
        "compare",
        "--each-run",
        a,
        b,
        "--html",
        page.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_tidy(page);
    std::fs::read_to_string(page).unwrap()
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

    let text = compare_page(&a.store, &b.store, &a.dir.path().join("compare.html"));
    assert_offline(&text);
    // Named by label (the same kernel twice, from two stores of one file
    // name: each gets its source and position).
    assert!(text.contains("(s.sqlite:1) #1, Linux "), "labels as names");
    assert!(
        text.contains(r#"<section id="relative">"#)
            && text.contains(r#"<section id="environment">"#)
    );
    let series = text.matches(r#"class="series""#).count();
    assert!(
        series >= 2 && series % 2 == 0,
        "A and B on each chart: {series}"
    );
}

/// A recipe whose name, description, system labels and a server setting
/// (`extra_http`, an nginx comment here) are markup if pasted raw.
const HOSTILE_RECIPE: &str = r##"name = "inj <script>alert(1)</script>"
description = "\"><img src=x onerror=alert(2)> & <script>alert(3)</script>"
[server]
kind = "nginx"
extra_http = "# <script>alert(4)</script> \"><img src=x onerror=alert(5)> &"
[load]
kind = "http"
path = "/"
[sweep]
connections = [1, 4]
[trials]
duration = "300ms"
warmup = "0s"
min = 1
max = 1
[[system]]
label = "<script>alert(6)</script>"
server = { worker_processes = 1 }
[[system]]
label = "\"><img src=x onerror=alert(7)>&"
server = { worker_processes = 1 }
"##;

/// No tag from the recipe's text survives raw; `escaped` all appear.
fn assert_only_text(html: &str, escaped: &[&str]) {
    for raw in ["<script", "<img", "onerror=alert(7)>&<", "& <"] {
        assert!(!html.contains(raw), "raw {raw:?} in the page");
    }
    for e in escaped {
        assert!(html.contains(e), "{e:?} missing");
    }
}

#[test]
fn hostile_recipe_text_stays_text_in_the_report_and_the_comparison() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("exp.toml");
    std::fs::write(&exp, HOSTILE_RECIPE).unwrap();
    let store = dir.path().join("s.sqlite");
    let report = dir.path().join("report.html");
    let done = run::run_cmd(dir.path(), &store, &exp)
        .args(["-o", report.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", stderr(&done));
    let name = "inj &lt;script&gt;alert(1)&lt;/script&gt;";
    let label_a = "&lt;script&gt;alert(6)&lt;/script&gt;";
    let label_b = "&quot;&gt;&lt;img src=x onerror=alert(7)&gt;&amp;";
    let html = std::fs::read_to_string(&report).unwrap();
    assert_tidy(&report);
    assert_only_text(
        &html,
        &[
            &format!("<h1>{name}</h1>"),
            "&quot;&gt;&lt;img src=x onerror=alert(2)&gt; &amp; &lt;script&gt;alert(3)",
            "extra_http = &quot;# &lt;script&gt;alert(4)&lt;/script&gt; \\&quot;&gt;&lt;img src=x onerror=alert(5)&gt; &amp;",
            &format!("<td>{label_a}</td>"),
            &format!("<td>{label_b}</td>"),
            &format!(r#"data-series="{label_b}""#),
            &format!("<title>{label_a}: "),
        ],
    );

    let s = store.to_str().unwrap();
    let export = run(&["--store", s, "export", "1", "--format", "json"]);
    assert!(export.status.success(), "{}", stderr(&export));
    let doc: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    let bad = crate::support::json_schema::violations(&crate::support::export_schema(), &doc);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert_eq!(doc["run"]["name"], "inj <script>alert(1)</script>");

    // A second run of it: a run is never compared with itself.
    let again = run::run_cmd(dir.path(), &store, &exp)
        .args(["-o", report.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    let text = compare_runs_page(
        &format!("{s}:1"),
        &format!("{s}:2"),
        &dir.path().join("compare.html"),
    );
    assert_only_text(
        &text,
        &[
            &format!("<code>{name}</code>"),
            // The verdicts' rows name each system, paired with itself.
            &format!("<td>{label_a}</td><td>connections=1</td>"),
            &format!("<td>{label_b}</td><td>connections=1</td>"),
            &format!("(s.sqlite:2) · {label_b}\""),
        ],
    );
}
