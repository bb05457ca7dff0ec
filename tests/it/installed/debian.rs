//! What this machine's dpkg says: the package whose file a program is
//! (`dpkg -S`), and which packages a fresh Debian already has or a list of
//! packages pulls in (each installed package's `Essential`, `Priority`,
//! `Depends`, `Pre-Depends` and `Provides`, from one `dpkg-query`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The directories Debian's packages put programs in. A program found only
/// elsewhere on PATH (/usr/local, ~/.cargo, pyenv) was installed by hand.
pub const SYSTEM_DIRS: [&str; 4] = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/// The files `program` (a name, or an absolute path) is on this machine,
/// in the system directories.
pub fn files_of(program: &str) -> Vec<PathBuf> {
    if program.starts_with('/') {
        return [PathBuf::from(program)]
            .into_iter()
            .filter(|p| p.exists())
            .collect();
    }
    SYSTEM_DIRS
        .iter()
        .map(|d| Path::new(d).join(program))
        .filter(|p| p.exists())
        .collect()
}

/// The names dpkg may have recorded for `file`: as found and with its
/// symlinks resolved (an alternative, /usr/bin/awk → mawk), each with and
/// without /usr (a merged-/usr system records /bin/ip, found as /usr/bin/ip).
pub fn dpkg_names(file: &Path) -> Vec<String> {
    let mut out = BTreeSet::new();
    for p in [Some(file.to_path_buf()), std::fs::canonicalize(file).ok()]
        .into_iter()
        .flatten()
    {
        let s = p.display().to_string();
        match s.strip_prefix("/usr") {
            Some(rest) => out.insert(rest.to_string()),
            None => out.insert(format!("/usr{s}")),
        };
        out.insert(s);
    }
    out.into_iter().collect()
}

/// The package that owns each of `names` that dpkg knows, in one `dpkg -S`.
pub fn owners(names: &BTreeSet<String>) -> BTreeMap<String, String> {
    if names.is_empty() {
        return BTreeMap::new();
    }
    let out = Command::new("dpkg")
        .arg("-S")
        .args(names)
        .output()
        .expect("dpkg runs: the suite runs on Debian");
    parse_owners(&String::from_utf8_lossy(&out.stdout))
}

/// `dpkg -S` lines: `pkg: /path`, `pkg:amd64: /path`, `a, b: /path`;
/// `diversion by …` lines name no owner.
fn parse_owners(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with("diversion by"))
        .filter_map(|l| l.rsplit_once(": "))
        .map(|(pkgs, path)| {
            let first = pkgs.split(", ").next().unwrap_or(pkgs);
            let name = first.split(':').next().unwrap_or(first);
            (path.to_string(), name.to_string())
        })
        .collect()
}

/// One installed package's fields.
#[derive(Debug, Default)]
struct Control {
    /// `Essential: yes` or `Priority: required`: in every fresh Debian
    /// (debootstrap's minbase, the Docker image).
    fresh: bool,
    /// What installing it installs (the first of each `a | b`).
    depends: Vec<String>,
    priority: String,
}

/// Every installed package, and which real packages provide each virtual one.
pub struct Installed {
    packages: BTreeMap<String, Control>,
    providers: BTreeMap<String, Vec<String>>,
}

impl Installed {
    /// From one `dpkg-query -W` over every package dpkg knows.
    pub fn read() -> Installed {
        let out = Command::new("dpkg-query")
            .args([
                "-W",
                "-f",
                "${Package}\t${db:Status-Status}\t${Essential}\t${Priority}\t\
                 ${Pre-Depends}, ${Depends}\t${Provides}\n",
            ])
            .output()
            .expect("dpkg-query runs: the suite runs on Debian");
        parse_installed(&String::from_utf8_lossy(&out.stdout))
    }

    /// The packages a fresh Debian has, with `listed`, and all they pull in.
    pub fn closure<'a>(&self, listed: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
        let fresh = self
            .packages
            .iter()
            .filter(|(_, c)| c.fresh)
            .map(|(p, _)| p.clone());
        self.reach(
            fresh
                .chain(listed.into_iter().map(str::to_string))
                .collect(),
        )
    }

    /// `package` and all it pulls in.
    pub fn closure_of(&self, package: &str) -> BTreeSet<String> {
        self.reach(vec![package.to_string()])
    }

    fn reach(&self, mut todo: Vec<String>) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        while let Some(p) = todo.pop() {
            if !seen.insert(p.clone()) {
                continue;
            }
            todo.extend(self.providers.get(&p).cloned().unwrap_or_default());
            if let Some(c) = self.packages.get(&p) {
                todo.extend(c.depends.iter().cloned());
            }
        }
        seen
    }

    /// `Priority: X` of an installed package, for the failure message.
    pub fn priority(&self, package: &str) -> &str {
        self.packages
            .get(package)
            .map_or("not installed", |c| c.priority.as_str())
    }
}

fn parse_installed(text: &str) -> Installed {
    let mut packages = BTreeMap::new();
    let mut providers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let [name, status, essential, priority, depends, provides] = f[..] else {
            continue;
        };
        if status != "installed" {
            continue;
        }
        for virt in dependency_names(provides) {
            providers.entry(virt).or_default().push(name.to_string());
        }
        packages.insert(
            name.to_string(),
            Control {
                fresh: essential == "yes" || priority == "required",
                depends: dependency_names(depends),
                priority: priority.to_string(),
            },
        );
    }
    Installed {
        packages,
        providers,
    }
}

/// `a (>= 1), b:any | c, ` → a, b.
fn dependency_names(field: &str) -> Vec<String> {
    field
        .split(',')
        .filter_map(|alt| alt.split('|').next())
        .filter_map(|d| d.split_whitespace().next())
        .map(|d| d.split(':').next().unwrap_or(d).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dpkg_output_is_read() {
        let owners = parse_owners(
            "iproute2: /bin/ip\ndiversion by dash from: /bin/sh\n\
             libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6\na, b: /usr/share/x\n",
        );
        assert_eq!(owners["/bin/ip"], "iproute2");
        assert_eq!(owners["/lib/x86_64-linux-gnu/libc.so.6"], "libc6");
        assert_eq!(owners["/usr/share/x"], "a");
        assert_eq!(owners.len(), 3);
        let installed = parse_installed(
            "gcc\tinstalled\tno\toptional\t, gcc-12 (>= 12), cpp | cpp-x\t\n\
             gcc-12\tinstalled\tno\toptional\t, awk\t\n\
             mawk\tinstalled\tno\trequired\t, \tawk\n\
             git\tinstalled\tno\toptional\t, \t\n\
             old\tconfig-files\tyes\trequired\t, \t\n",
        );
        let got = installed.closure(["gcc"]);
        let want = ["awk", "cpp", "gcc", "gcc-12", "mawk"];
        assert_eq!(got.iter().map(String::as_str).collect::<Vec<_>>(), want);
    }
}
