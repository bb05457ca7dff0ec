//! NIC settings in the fingerprint (issue 39): a lab host's veth shows its
//! driver, channels and offloads, and an offload changed between two runs
//! is a differing row of `compare`'s environment table.

use crate::multihost::{run, Lab};
use crate::support::{stderr, stdout};
use scalelab::store::Store;

#[test]
fn a_hosts_veth_is_fingerprinted_and_a_changed_offload_shows_in_compare() {
    // h1 serves (with its agent); h2 drives the load.
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("exp.toml");
    std::fs::write(
        &exp,
        "name = \"nic\"\n[hosts]\nserver = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\"]\n\
         [server]\nkind = \"nginx\"\n[load]\nkind = \"http\"\npath = \"/\"\n\
         [sweep]\nconnections = [2]\n[trials]\nduration = \"1s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    )
    .unwrap();
    let first = run(&lab, dir.path(), &exp);
    assert!(first.status.success(), "{}", stderr(&first));
    let data = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("1")
        .unwrap();
    let facts = data.run.environment_facts();
    let eth0 = &facts["hosts"]["root@198.18.0.11"]["nics"]["eth0"];
    assert_eq!(eth0["driver"], "veth", "{eth0}");
    assert_eq!(eth0["channels"]["RX"], "1", "{eth0}");
    assert_eq!(eth0["offloads"]["tcp-segmentation-offload"], "on", "{eth0}");
    assert!(eth0["rps_cpus"]["rx-0"].is_string(), "{eth0}");
    // TSO off on the server host's veth, then the same recipe again.
    let off = lab.exec(1, &["ethtool", "-K", "eth0", "tso", "off"]);
    assert!(off.status.success(), "{}", stderr(&off));
    let second = run(&lab, dir.path(), &exp);
    assert!(second.status.success(), "{}", stderr(&second));
    let out = crate::support::run(&[
        "--store",
        &dir.path().join("s.sqlite").display().to_string(),
        "compare",
        "1",
        "2",
        "--each-run",
    ]);
    let text = stdout(&out);
    let row = text
        .lines()
        .find(|l| l.contains("nics.eth0.offloads.tcp-segmentation-offload"))
        .unwrap_or_else(|| panic!("no offload row:\n{text}\n{}", stderr(&out)));
    let words: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(words[words.len() - 2..], ["on", "off"], "{row}");
    // Only what changed differs: the driver is not a row.
    assert!(!text.contains("nics.eth0.driver"), "{text}");
}
