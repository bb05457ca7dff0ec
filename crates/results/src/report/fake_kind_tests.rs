//! The test-only `fake-rule` load kind (`scalelab_lab::load`'s
//! `fake_rule.rs`) through the report: its own comparability rule decides
//! its points, and its own mark is drawn on the throughput chart. It is
//! the one file outside the kind's module that names it.

use crate::load::LoadSpec;
use crate::report::test_support::{fake_analyse, run_data};
use crate::shutdown::Shutdown;
use crate::store::TrialContext;
use std::time::Duration;

#[test]
fn its_rule_decides_its_points_and_its_mark_is_drawn() {
    let table: toml::Table = toml::from_str("frames = 10\nlimit = 100").unwrap();
    // Found by name in the registry, as a recipe's `kind` is.
    let kind = crate::load::kind("fake-rule").unwrap();
    let plan = crate::load::compile(kind, &table).unwrap();
    let driver = plan.driver("fake://1").unwrap();
    let mut data = run_data(&["a"]);
    for t in &mut data.trials {
        let connections = t.point.coords[0].value.as_integer().unwrap() as u32;
        let spec = LoadSpec::closed(connections, 1, Duration::from_secs(1));
        let r = driver.run(&spec, &Shutdown::new()).unwrap();
        // Through the store's text, as a report reads it.
        let stored = TrialContext {
            extras: r.extras,
            ..TrialContext::default()
        };
        t.context = TrialContext::from_stored(
            &serde_json::to_string(&stored).unwrap(),
            scalelab_lab::catalog(),
        );
        assert_eq!(t.context, stored);
        if connections == 10 {
            // Errors the shared rule would judge not comparable.
            let m = t.measurement.as_mut().unwrap();
            m.errors.timeout = m.requests;
        }
    }
    let mut agg = crate::report::rows::collect(&data);
    let judged = |n: f64| {
        let cell = agg.cells.iter().find(|c| c.x == Some(n)).unwrap();
        cell.not_comparable.clone()
    };
    assert_eq!(judged(10.0), None, "its rule, not the error rate, decides");
    assert_eq!(judged(100.0), None);
    let why = judged(1000.0).unwrap();
    assert!(
        why.ends_with("refused, over 5% of 30000 completed"),
        "{why}"
    );
    fake_analyse(&mut agg);
    let charts = crate::report::charts::charts(&agg);
    let throughput = charts
        .iter()
        .find(|c| c.kind == crate::report::charts::ChartKind::Throughput)
        .unwrap();
    assert!(throughput.svg.0.contains("refusing past here"));
    assert!(throughput
        .caption
        .contains("where the fake server starts refusing"));
}
