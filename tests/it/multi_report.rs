//! Issue 26's N runs on one page, with real runs: three quick runs of one
//! recipe against a real nginx on loopback, each in its own store with its
//! own `--label`, give one report (three labelled curves on each chart, the
//! relative % table, per-point verdicts against the first, an environment
//! table with one column per run) and one `compare` with two sets of
//! verdicts, in the terminal and in `--json`.

use crate::html_valid::assert_tidy;
use crate::support::run::Lab;
use crate::support::{run, stderr, stdout};

const LABELS: [&str; 3] = ["alpha", "beta", "gamma"];

/// Two points, four trials each (the fewest at which Mann-Whitney can
/// reach p < 0.05), 300 ms windows.
const SWEEP: &str =
    "[sweep]\nconnections = [1, 4]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\n\
     min = 4\nmax = 4\n[[system]]\nlabel = \"nginx\"\nserver = { worker_processes = 1 }\n";

/// Runs the three labs, `alpha` with `--commit`, `beta` with
/// `SCALELAB_COMMIT`; returns them with their `STORE:1` references.
fn three_runs() -> (Vec<Lab>, Vec<String>) {
    let labs: Vec<Lab> = LABELS.iter().map(|_| Lab::new(SWEEP)).collect();
    for (lab, label) in labs.iter().zip(LABELS) {
        let mut cmd = lab.run();
        cmd.args(["--label", label, "-o"])
            .arg(lab.dir.path().join("own.html"));
        match label {
            "alpha" => {
                cmd.args(["--commit", "v1.2.3"]);
            }
            "beta" => {
                cmd.env("SCALELAB_COMMIT", "deadbeef");
            }
            _ => {}
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{label}: {}", stderr(&out));
    }
    let refs = labs
        .iter()
        .map(|l| format!("{}:1", l.store.display()))
        .collect();
    (labs, refs)
}

/// Simulates a sysctl changed on gamma's machine by editing its stored
/// environment JSON (changing a real sysctl would touch the whole host).
fn change_somaxconn(lab: &Lab) {
    let conn = rusqlite::Connection::open(&lab.store).unwrap();
    let changed = conn
        .execute(
            "UPDATE runs SET environment = json_set(environment, '$.sysctls.\"net.core.somaxconn\"', '17')",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
}

#[test]
fn three_labelled_runs_from_three_stores_on_one_page_and_in_one_compare() {
    let (labs, refs) = three_runs();
    change_somaxconn(&labs[2]);

    // Each run keeps its label and revision.
    let export = run(&[
        "--store",
        labs[1].store.to_str().unwrap(),
        "export",
        "1",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    assert_eq!(doc["run"]["label"], "beta");
    assert_eq!(doc["run"]["revision"], "deadbeef");

    let page = labs[0].dir.path().join("three.html");
    let mut args: Vec<&str> = vec!["report"];
    args.extend(refs.iter().map(String::as_str));
    args.extend(["-o", page.to_str().unwrap()]);
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_tidy(&page);
    let html = std::fs::read_to_string(&page).unwrap();

    // Three labelled curves on each line chart.
    let charts: Vec<&str> = html
        .split("<figure>")
        .skip(1)
        .filter(|f| f.contains(r#"class="series""#))
        .collect();
    assert!(charts.len() >= 3, "{} line charts", charts.len());
    for chart in &charts {
        for label in LABELS {
            assert!(
                // `alpha`, or `alpha p50` where a chart draws several lines per series.
                chart.contains(&format!(r#"class="series" data-series="{label}"#)),
                "no {label} curve in {}",
                &chart[..chart.len().min(300)]
            );
        }
    }
    // The relative % table: a column per side, named by what it holds
    // (one run a side: its median), and the geometric mean.
    let relative = &html[html.find(r#"<section id="relative">"#).unwrap()..];
    assert!(relative.contains("<td><b>geomean</b></td>"));
    for label in LABELS {
        assert!(
            relative.contains(&format!(r#"<th class="n">{label} median</th>"#)),
            "{label}"
        );
    }
    // Per-point verdicts of each other side against the first, at both
    // points, system against the same system.
    for label in ["beta", "gamma"] {
        let heading = format!("Verdicts of {label} against alpha");
        let table = &relative[relative.find(&heading).expect(&heading)..];
        let table = &table[..table.find("</table>").unwrap()];
        for point in ["connections=1", "connections=4"] {
            let row = format!("<tr><td>nginx</td><td>{point}</td>");
            assert!(table.contains(&row), "no verdict row {row} under {heading}");
        }
    }
    assert!(relative.contains("95% CI"));
    // The environment: one column per run, the changed sysctl first.
    let env = &html[html.find(r#"<section id="environment">"#).unwrap()..];
    assert!(env.contains("<tr><th>key</th><th>alpha</th><th>beta</th><th>gamma</th></tr>"));
    let first = env.find(r#"<tr class="diff">"#).expect("a differing row");
    assert!(
        env[first..].starts_with(r#"<tr class="diff"><td><b>sysctls.net.core.somaxconn</b></td>"#),
        "{}",
        &env[first..first + 200]
    );
    assert!(env[first..].contains("<td>17</td>"));
    // The revisions are in the runs table.
    assert!(html.contains("<td>v1.2.3</td>") && html.contains("<td>deadbeef</td>"));

    // compare: two sets of verdicts, in the terminal and in JSON.
    let mut args: Vec<&str> = vec!["compare"];
    args.extend(refs.iter().map(String::as_str));
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("beta (it, run 1) against alpha (it, run 1, the baseline)"),
        "{text}"
    );
    assert!(
        text.contains("gamma (it, run 1) against alpha (it, run 1, the baseline)"),
        "{text}"
    );
    assert_eq!(text.matches("\ngeomean").count(), 2, "{text}");
    // Between runs the run is the unit: one run a side is `?`, with no
    // p-value, and the method is said once.
    assert_eq!(
        text.matches("between runs: the run is the unit").count(),
        1,
        "{text}"
    );
    for line in text.lines().filter(|l| l.starts_with("nginx ")) {
        // `(0 runs a side)` where both runs ran beside background load (a
        // busy machine): shown, not judged, and said.
        assert!(
            line.contains("? ") && (line.contains("(1 run a side)") || line.contains(" run")),
            "{line}\n{text}"
        );
    }
    assert!(
        !text.contains("p="),
        "a p-value between single runs: {text}"
    );
    let somaxconn = text
        .lines()
        .find(|l| l.contains("sysctls.net.core.somaxconn"))
        .unwrap_or_else(|| panic!("no sysctl row in\n{text}"));
    assert!(somaxconn.trim_end().ends_with("17"), "{somaxconn}");
    args.push("--json");
    let out = run(&args);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["baseline"], "alpha");
    assert!(v["between_runs"]
        .as_str()
        .is_some_and(|t| t.starts_with("between runs: ")));
    let sets = v["comparisons"].as_array().unwrap();
    let labels: Vec<&str> = sets.iter().map(|c| c["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["beta", "gamma"]);
    for set in sets {
        let verdicts = set["points"].as_array().unwrap();
        assert_eq!(verdicts.len(), 2, "{set}");
        assert!(verdicts
            .iter()
            .all(|p| p["comparison"]["verdict"]["verdict"].is_string()));
    }
    assert_eq!(v["environment"][0]["key"], "sysctls.net.core.somaxconn");
}

/// A blank `--label` or `--commit` is refused before anything runs or any
/// store is made.
#[test]
fn a_blank_label_or_commit_is_refused() {
    let lab = Lab::new(SWEEP);
    for flag in ["--label", "--commit"] {
        let out = lab.run().args([flag, " "]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("{flag} is empty")),
            "{}",
            stderr(&out)
        );
        assert!(!lab.store.exists(), "no store made");
    }
}

/// Issue 35: `run --repeat 3` makes three runs with one label; `compare`
/// of two labels' repeats pools them (and says so), judges each point on
/// the runs' headlines (3 v 3), shows the drift between runs, and the
/// N-run page draws each label as one series.
#[test]
fn repeats_of_two_labels_are_judged_run_against_run() {
    let lab = Lab::new(SWEEP);
    // Two labels of one setup (an A/A pair): the structure is what is checked.
    for label in ["one", "two"] {
        let out = lab
            .run()
            .args(["--repeat", "3", "--label", label, "-o"])
            .arg(lab.dir.path().join(format!("{label}.html")))
            .output()
            .unwrap();
        assert!(out.status.success(), "{label}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains(&format!("3 repeats of `{label}`")), "{text}");
        assert!(
            text.contains(&format!("drift between the 3 runs of `{label}`")),
            "{text}"
        );
        assert!(
            stderr(&out).contains("repeat 3 of 3: pausing"),
            "{}",
            stderr(&out)
        );
    }
    let store = lab.store.to_str().unwrap();
    let runs: Vec<String> = (1..=6).map(|i| i.to_string()).collect();
    let mut args = vec!["--store", store, "compare"];
    args.extend(runs.iter().map(String::as_str));
    let out = run(&args);
    assert!(matches!(out.status.code(), Some(0 | 5)), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("`one`: 3 runs pooled by label as repeats of one system"),
        "{text}"
    );
    assert!(
        text.contains("two (it, 3 runs) against one (it, 3 runs, the baseline)"),
        "{text}"
    );
    for line in text.lines().filter(|l| l.starts_with("nginx ")) {
        // Judged run against run, or not comparable with its reason, or
        // (a busy machine) shown but not judged, the runs that ran beside
        // background load left out and said so.
        let left_out = line.contains("? ") && text.contains("ran beside background load");
        assert!(
            line.contains("3 v 3 runs") || line.contains("not comparable") || left_out,
            "{line}\n{text}"
        );
    }
    assert!(
        text.contains("to tell 2.0% apart between runs on this host"),
        "{text}"
    );
    // Issue 46: --noise moved the verdicts' floor but not the plan's.
    let mut noisy = args.clone();
    noisy.extend(["--noise", "7"]);
    let text = stdout(&run(&noisy));
    assert!(
        text.contains("reaches inside the 7% noise floor"),
        "the verdicts' floor: {text}"
    );
    assert!(
        text.contains("to tell 7.0% apart between runs on this host"),
        "{text}"
    );
    assert!(!text.contains("to tell 2.0% apart"), "{text}");
    let page = lab.dir.path().join("repeats.html");
    args.extend(["--html", page.to_str().unwrap()]);
    let out = run(&args);
    assert!(matches!(out.status.code(), Some(0 | 5)), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_tidy(&page);
    assert!(
        html.contains(r#"class="series" data-series="one""#),
        "one series for `one`"
    );
    assert!(!html.contains("data-series=\"one ("), "no per-run series");
    assert!(html.contains("Drift between runs"));
}
