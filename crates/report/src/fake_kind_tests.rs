//! The test-only `fake-rule` kinds (`scalelab_lab::load`'s and
//! `scalelab_lab::server`'s `fake_rule.rs`, speaking `scalelab_wire`'s
//! `fake_rule` protocol) through the store's text and the report: its own
//! comparability rule decides its points, its own mark is drawn on the
//! throughput chart, its own chart is drawn in a section of its own, and
//! its own dataset and its server's own facts reach the report's cells. It is the one file
//! outside the kinds' modules that names them.

use crate::judging::test_support::{fake_analyse, run_data};
use crate::load::LoadSpec;
use crate::shutdown::Shutdown;
use crate::store::TrialContext;
use std::time::Duration;

#[test]
fn its_rule_decides_its_points_and_its_mark_is_drawn() {
    let table: toml::Table = toml::from_str("frames = 10\nlimit = 100\nkeys = 1000").unwrap();
    // Found by name in the registry, as a recipe's `kind` is.
    let kind = crate::load::kind("fake-rule").unwrap();
    let plan = crate::load::compile(kind, &table).unwrap();
    // Its server, of its own protocol, with facts of its own.
    let server_kind = crate::server::kind("fake-rule").unwrap();
    assert_eq!(server_kind.serves, Some(kind.protocol));
    let server_table: toml::Table = toml::from_str("link_gbit = 2.5").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let server_plan = crate::server::compile(server_kind, &server_table).unwrap();
    let mut server = server_plan.build(dir.path()).unwrap();
    let placement = crate::placement::Placement::default();
    // Its own dataset, declared by its load kind and held by its server.
    let dataset = plan.dataset();
    let endpoint = (server.start(&placement, dataset.as_ref(), &Shutdown::new())).unwrap();
    let held = server.dataset().unwrap();
    assert_eq!(
        (held.description.as_str(), held.bytes),
        ("fake-rule 1000 keys", 8000)
    );
    let driver = plan.driver(&endpoint.uri).unwrap();
    let mut data = run_data(&["a"]);
    for t in &mut data.trials {
        let connections = t.point.coords[0].value.as_integer().unwrap() as u32;
        let spec = LoadSpec::closed(connections, 1, Duration::from_secs(1));
        let r = driver.run(&spec, &Shutdown::new()).unwrap();
        // Through the store's text, as a report reads it.
        let stored = TrialContext {
            extras: r.extras,
            server_settings: server.describe(),
            dataset: server.dataset(),
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
    server.stop().unwrap();
    let mut agg = crate::judging::rows::collect(&data);
    // Its server's facts, read back through the catalog, asked by method.
    let link = crate::record::server::ServerFigure {
        name: crate::wire::fake_rule::LINK_GBIT,
        value: 2.5,
    };
    assert!(agg.cells.iter().all(|c| c.facts.server_figures == [link]));
    // And its dataset's size, as every dataset's.
    assert!(agg
        .cells
        .iter()
        .all(|c| c.facts.dataset_bytes == Some(8000.0)));
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
    let charts = crate::charts::charts(&agg);
    let throughput = charts
        .iter()
        .find(|c| c.kind == crate::charts::ChartKind::Throughput)
        .unwrap();
    assert!(throughput.svg.0.contains("refusing past here"));
    assert!(throughput
        .caption
        .contains("where the fake server starts refusing"));
    // Its own chart, in its own section, drawn without the report knowing
    // the kind: the share refused at 1000 connections (10% of the cell's
    // first trial) is a point.
    let own = charts
        .iter()
        .find(|c| matches!(c.kind, crate::charts::ChartKind::Kind(s) if s.id == "refusals"))
        .unwrap();
    assert!(own.svg.0.contains("share refused against connections"));
    assert!(own
        .svg
        .0
        .contains("connections=1000: 1000 refused of 10000"));
    assert!(own.caption.contains("dotted 5% line"));
}
