//! nginx: config written into a private run directory, started with
//! `daemon off` through [`ServerProcess`], stopped with SIGQUIT (graceful)
//! and then as a whole: workers that outlive their master are killed too.
//!
//! Serves `return 200 "{}"` at `/` (seed 003) and static files `/1k.bin`,
//! `/8k.bin`, `/16k.bin` (seed 001) from the run directory.

use super::bare::{BareFile, BareHost, BareReady, BareServer, HostOs};
use super::{Endpoint, Placement, Server, ServerError, Shutdown};
use crate::sys::lifecycle::ServerProcess;
use crate::sys::process::{self, WaitError};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const KIND: &str = "nginx";
/// The most workers and the largest static file scalelab will set up.
const MAX_WORKERS: u32 = 1024;
const MAX_FILE: crate::units::Bytes = crate::units::Bytes(1 << 30);

/// The `nginx` server kind.
pub const SERVER_KIND: super::ServerKind = super::ServerKind {
    name: KIND,
    serves: Some(crate::model::Protocol::HTTP),
    parallelism: &["worker_processes"],
    requires: &[
        crate::kinds::Requirement {
            what: "nginx",
            package: "nginx",
            paths: &["/usr/sbin/nginx"],
        },
        crate::kinds::Requirement {
            what: "openssl (the RSA key of `tls_key = \"rsa-2048\"`)",
            package: "openssl",
            paths: &["/usr/bin/openssl"],
        },
    ],
    compile: |t| Ok(Box::new(NginxSettings::parse(t)?)),
    runs_under_agent: true,
    listens_on_host_address: true,
    dns_lab: None,
    start_estimate: std::time::Duration::from_millis(300),
    facts: Some(super::ServerFactsReader::of::<
        super::nginx_tls::NginxTlsFacts,
    >()),
};

/// `worker_processes`: a count or `auto`.
#[derive(Clone, Debug, PartialEq)]
pub enum Workers {
    /// That many worker processes.
    Count(u32),
    /// `auto`: one worker per CPU nginx may run on.
    Auto,
}

impl<'de> Deserialize<'de> for Workers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Workers;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number of workers or \"auto\"")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Workers, E> {
                u32::try_from(n)
                    .map(Workers::Count)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(n), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Workers, E> {
                u32::try_from(n)
                    .map(Workers::Count)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(n), &self))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Workers, E> {
                match s {
                    "auto" => Ok(Workers::Auto),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(s), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

fn yes() -> bool {
    true
}

/// `[server]` settings of kind `nginx`; each field is the nginx directive of the same name
/// unless it says otherwise.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NginxSettings {
    /// `worker_processes`; default 1.
    #[serde(default = "default_workers")]
    pub worker_processes: Workers,
    /// `worker_connections` per worker; default 10240.
    #[serde(default = "default_worker_connections")]
    pub worker_connections: u32,
    /// `listen ... reuseport`: one accept queue per worker.
    #[serde(default = "yes")]
    pub reuseport: bool,
    /// `keepalive_requests`: requests per keep-alive connection before nginx closes it; default
    /// 1000000, so the load generator decides.
    #[serde(default = "default_keepalive_requests")]
    pub keepalive_requests: u32,
    /// Write an access log (into the private directory); default off.
    #[serde(default)]
    pub access_log: bool,
    /// Write the access log to this file instead of the private directory
    /// (kept after the run, e.g. to check scalelab's counts against it).
    /// Implies `access_log = true`.
    pub access_log_path: Option<PathBuf>,
    /// `sendfile`; default on.
    #[serde(default = "yes")]
    pub sendfile: bool,
    /// `tcp_nopush`; default on.
    #[serde(default = "yes")]
    pub tcp_nopush: bool,
    /// `tcp_nodelay`; default on.
    #[serde(default = "yes")]
    pub tcp_nodelay: bool,
    /// `multi_accept`: accept every pending connection at once; default off.
    #[serde(default)]
    pub multi_accept: bool,
    /// The listen socket's `backlog=`; default 4096.
    #[serde(default = "default_backlog")]
    pub backlog: u32,
    /// `worker_cpu_affinity`, e.g. `auto`.
    pub worker_cpu_affinity: Option<String>,
    /// Fixed port; default: a free loopback port.
    pub port: Option<u16>,
    /// Address to listen on; default 127.0.0.1. A multi-host run sets it to
    /// the server host's address from `[hosts]`.
    pub listen: Option<std::net::IpAddr>,
    /// Extra static files: name -> size, e.g. `{ "64k.bin" = "64K" }`.
    #[serde(default)]
    pub files: toml::Table,
    /// Raw directives appended inside `http { }`, for anything not covered.
    pub extra_http: Option<String>,
    /// Serve HTTPS (`listen ... ssl`) with a CA and certificate made at each
    /// start in the private directory; the load is handed the CA. Default
    /// off. The access log then also says each request's `$ssl_protocol`,
    /// `$ssl_session_reused` and `$server_protocol`.
    #[serde(default)]
    pub tls: bool,
    /// The certificate's key: `"ecdsa-p256"` (default) or `"rsa-2048"`.
    #[serde(default)]
    pub tls_key: crate::tls::cert::KeyType,
    /// `ssl_protocols`; default `TLSv1.2 TLSv1.3` (nginx 1.22's own default
    /// leaves 1.3 out).
    pub ssl_protocols: Option<String>,
    /// Serve HTTP/2 (`listen ... http2`): with `tls` beside HTTP/1.1, the
    /// client choosing by ALPN; without, cleartext HTTP/2 only, with prior
    /// knowledge (`h2c`). Default off.
    #[serde(default)]
    pub http2: bool,
    /// With `tls`: ask for kernel TLS (`ssl_conf_command Options KTLS`).
    /// Whether the kernel took the sessions over is read from
    /// `/proc/net/tls_stat` and stored with each trial, or is
    /// "unavailable: no kernel TLS".
    #[serde(default)]
    pub ktls: bool,
    /// The nginx binary; default: `/usr/sbin/nginx` here, and on a host
    /// without an agent the first `nginx` on `PATH`, in `/usr/local/sbin`
    /// or `/usr/local/bin`.
    pub binary: Option<PathBuf>,
}

/// The access log's format with TLS: the connection, its request count,
/// the request and status, and how the connection was made.
const TLS_LOG_FORMAT: &str = "    log_format scalelab_tls '$remote_addr $connection $connection_requests \
                              \"$request\" $status $ssl_protocol $ssl_session_reused $server_protocol';\n";

fn default_workers() -> Workers {
    Workers::Count(1)
}
fn default_worker_connections() -> u32 {
    10240
}
fn default_keepalive_requests() -> u32 {
    1_000_000
}
fn default_backlog() -> u32 {
    4096
}

impl NginxSettings {
    /// `ssl_protocols`.
    fn protocols(&self) -> &str {
        self.ssl_protocols.as_deref().unwrap_or("TLSv1.2 TLSv1.3")
    }

    /// The address nginx listens on.
    pub fn listen_addr(&self) -> std::net::IpAddr {
        self.listen.unwrap_or(std::net::Ipv4Addr::LOCALHOST.into())
    }

    /// Reads and checks the `[server]` table of kind `nginx`; errors name the field.
    pub fn parse(t: &toml::Table) -> Result<Self, ServerError> {
        let s: NginxSettings =
            crate::kinds::parse_settings(t).map_err(|m| ServerError::settings(KIND, m))?;
        if let Workers::Count(n) = s.worker_processes {
            if !(1..=MAX_WORKERS).contains(&n) {
                return Err(settings_err(&format!(
                    "`worker_processes` must be 1 to {MAX_WORKERS} or \"auto\", got {n}"
                )));
            }
        }
        if (s.ktls || s.ssl_protocols.is_some()) && !s.tls {
            return Err(settings_err(
                "`ktls` and `ssl_protocols` need `tls = true`; add it, or leave them out",
            ));
        }
        for (name, size) in &s.files {
            let ok = size
                .as_str()
                .map(crate::units::parse_bytes)
                .is_some_and(|r| r.is_ok_and(|b| b <= MAX_FILE));
            if !ok || name.contains('/') || name.starts_with('.') {
                return Err(settings_err(&format!(
                    "`files.{name}` must map a plain file name to a size up to 1G, such as \"64K\""
                )));
            }
        }
        Ok(s)
    }

    /// Static files served: the seed's three plus any extra.
    fn static_files(&self) -> Vec<(String, u64)> {
        let mut out = vec![
            ("1k.bin".to_string(), 1024),
            ("8k.bin".into(), 8192),
            ("16k.bin".into(), 16384),
        ];
        for (name, size) in &self.files {
            let bytes = size
                .as_str()
                .and_then(|s| crate::units::parse_bytes(s).ok())
                .map(|b| b.0)
                .unwrap_or(0);
            out.push((name.clone(), bytes));
        }
        out
    }

    fn render(&self, dir: &Path, port: u16, os: HostOs) -> String {
        use super::conf_path::quoted;
        let d = |rel: &str| quoted(&dir.join(rel));
        let workers = match &self.worker_processes {
            Workers::Count(n) => n.to_string(),
            Workers::Auto => "auto".into(),
        };
        let onoff = |b: bool| if b { "on" } else { "off" };
        let affinity = self
            .worker_cpu_affinity
            .as_ref()
            .map(|a| format!("worker_cpu_affinity {a};\n"))
            .unwrap_or_default();
        // With TLS each line says how its connection was made.
        let format = if self.tls { " scalelab_tls" } else { "" };
        let access = if let Some(path) = &self.access_log_path {
            format!("access_log {}{format};", quoted(path))
        } else if self.access_log {
            format!("access_log {}{format};", d("access.log"))
        } else {
            "access_log off;".into()
        };
        let (ssl, tls) = if self.tls {
            // nginx before 1.23.4 leaves TLS 1.3 out by default.
            let mut protocols = format!("        ssl_protocols {};\n", self.protocols());
            if self.ktls {
                protocols.push_str("        ssl_conf_command Options KTLS;\n");
            }
            (
                " ssl",
                format!(
                    "        ssl_certificate {};\n        ssl_certificate_key {};\n{protocols}",
                    d("tls/server.pem"),
                    d("tls/server.key")
                ),
            )
        } else {
            ("", String::new())
        };
        let reuse = if self.reuseport { " reuseport" } else { "" };
        // The OS's own event method: epoll on Linux, kqueue on the BSDs
        // (nginx picks the best one when none is named).
        let events = match os {
            HostOs::Linux => "    use epoll;\n",
            HostOs::FreeBsd | HostOs::DragonFly | HostOs::NetBsd => "    use kqueue;\n",
            HostOs::Other => "",
        };
        // A BSD has no group `root` (root's is `wheel`).
        let group = if os.is_bsd() { " wheel" } else { "" };
        format!(
            "# written by scalelab\n\
             worker_processes {workers};\n{affinity}\
             worker_rlimit_nofile 16384;\n\
             pid {pid};\n\
             error_log {error_log} warn;\n\
             user root{group};\n\
             events {{\n    worker_connections {wc};\n    multi_accept {ma};\n{events}}}\n\
             http {{\n{log_format}    {access}\n    sendfile {sf};\n    tcp_nopush {np};\n    tcp_nodelay {nd};\n\
             \x20   keepalive_requests {kr};\n    server_tokens off;\n\
             \x20   client_body_temp_path {body};\n    proxy_temp_path {proxy};\n\
             \x20   fastcgi_temp_path {fastcgi};\n    uwsgi_temp_path {uwsgi};\n\
             \x20   scgi_temp_path {scgi};\n\
             \x20   types {{ application/octet-stream bin; }}\n\
             \x20   server {{\n        listen {addr}:{port}{ssl}{h2}{reuse} backlog={bl};\n{tls}\
             \x20       root {root};\n\
             \x20       location = / {{ default_type application/json; return 200 \"{{}}\"; }}\n\
             \x20       location / {{ }}\n    }}\n{extra}}}\n",
            addr = self.listen_addr(),
            log_format = if self.tls { TLS_LOG_FORMAT } else { "" },
            h2 = if self.http2 { " http2" } else { "" },
            pid = d("nginx.pid"),
            error_log = d("error.log"),
            body = d("tmp/body"),
            proxy = d("tmp/proxy"),
            fastcgi = d("tmp/fastcgi"),
            uwsgi = d("tmp/uwsgi"),
            scgi = d("tmp/scgi"),
            root = d("html"),
            wc = self.worker_connections,
            ma = onoff(self.multi_accept),
            sf = onoff(self.sendfile),
            np = onoff(self.tcp_nopush),
            nd = onoff(self.tcp_nodelay),
            kr = self.keepalive_requests,
            bl = self.backlog,
            extra = self.extra_http.as_ref().map(|e| format!("    {e}\n")).unwrap_or_default(),
        )
    }
}

/// nginx is built from its checked settings, here or, on a host without
/// an agent, by a shell there from the same configuration.
impl super::plan::ServerPlan for NginxSettings {
    fn build(&self, base_dir: &Path) -> Result<Box<dyn Server>, ServerError> {
        Ok(Box::new(Nginx::new(self.clone(), base_dir)))
    }

    fn runs_bare(&self) -> bool {
        true
    }

    fn bare(&self, host: &BareHost) -> Result<BareServer, ServerError> {
        if self.tls {
            return Err(settings_err(
                "`tls = true` on a host without an agent is not supported yet: run the \
                 agent there (`[hosts]` without `agent = false`), or serve cleartext",
            ));
        }
        let dir = &host.dir;
        let port = self.port.unwrap_or(host.port);
        let config = self.render(dir, port, host.os);
        let mut files = vec![BareFile::Text {
            path: "nginx.conf".into(),
            text: config.clone(),
        }];
        files.extend(
            self.static_files()
                .into_iter()
                .map(|(name, bytes)| BareFile::Filler {
                    path: format!("html/{name}"),
                    bytes,
                }),
        );
        let addr = self.listen_addr();
        let at = |rel: &str| dir.join(rel).display().to_string();
        Ok(BareServer {
            kind: KIND,
            program: "nginx",
            program_path: self.binary.clone(),
            dirs: vec!["html".into(), "tmp".into()],
            files,
            args: vec![
                "-p".into(),
                at(""),
                "-c".into(),
                at("nginx.conf"),
                "-g".into(),
                "daemon off;".into(),
            ],
            steps: Vec::new(),
            user: None,
            dataset: |d| super::refuse_dataset(KIND, d),
            stop_signal: "QUIT",
            version_arg: "-v",
            logs: vec!["stderr.log".into(), "error.log".into()],
            ready: BareReady::Http(addr, port),
            endpoint: format!("http://{}", std::net::SocketAddr::new(addr, port)),
            config,
        })
    }
}

fn settings_err(message: &str) -> ServerError {
    ServerError::Settings {
        kind: KIND,
        message: message.to_string(),
    }
}

/// The nginx target: a master and its workers serving `/` and static files from a private
/// run directory, on loopback (or the `[hosts]` address).
pub struct Nginx {
    settings: NginxSettings,
    base_dir: PathBuf,
    run_dir: Option<crate::owned::OwnedDir>,
    server: Option<ServerProcess>,
    port: Option<u16>,
    config: Option<String>,
    /// With `tls`: the CA this start made.
    ca_pem: Option<String>,
    /// With `tls`: `nginx -V`'s TLS library, and kernel TLS's sessions
    /// when the server started.
    tls_library: Option<String>,
    ktls_at_start: Result<crate::procfs::system::KtlsSessions, String>,
}

impl Nginx {
    /// An nginx target from its checked settings; nothing starts until
    /// `start`. `base_dir` holds the private run directories.
    pub fn new(settings: NginxSettings, base_dir: &Path) -> Self {
        Nginx {
            settings,
            base_dir: base_dir.to_path_buf(),
            run_dir: None,
            server: None,
            port: None,
            config: None,
            ca_pem: None,
            tls_library: None,
            ktls_at_start: Err(String::new()),
        }
    }

    fn binary(&self) -> Result<PathBuf, ServerError> {
        let own = self.settings.binary.iter().cloned();
        let known = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
            .iter()
            .map(PathBuf::from);
        own.chain(known)
            .find(|p| p.exists())
            .ok_or(ServerError::Missing {
                kind: KIND,
                message: "no nginx binary in /usr/sbin".into(),
            })
    }

    /// Creates the run directory with config, temp dirs and static files.
    fn prepare(&mut self, port: u16) -> Result<PathBuf, ServerError> {
        // nginx expands `$name` inside `root` and `access_log`, even quoted.
        super::conf_path::refuse_in_workdir(
            KIND,
            &self.base_dir,
            |c| c == '$',
            "has a `$`, which nginx reads as a variable in `root` and `access_log`",
        )?;
        let dir = super::rundir::create(&self.base_dir, super::rundir::NGINX)
            .map_err(|e| ServerError::io(&self.base_dir, e))?;
        let path = dir.path().to_path_buf();
        for sub in ["html", "tmp"] {
            std::fs::create_dir_all(path.join(sub)).map_err(|e| ServerError::io(&path, e))?;
        }
        for (name, size) in self.settings.static_files() {
            let file = path.join("html").join(&name);
            std::fs::write(&file, vec![b'x'; size as usize])
                .map_err(|e| ServerError::io(&file, e))?;
        }
        if self.settings.tls {
            let addr = self.settings.listen_addr();
            let mut ips = vec![addr];
            if addr != std::net::IpAddr::from(std::net::Ipv4Addr::LOCALHOST) {
                ips.push(std::net::Ipv4Addr::LOCALHOST.into());
            }
            let made = crate::tls::cert::make(&path, self.settings.tls_key, &["localhost"], &ips)
                .map_err(|e| ServerError::Start {
                kind: KIND,
                message: e.to_string(),
            })?;
            self.ca_pem = Some(made.ca_pem);
            self.tls_library = self.binary().ok().and_then(|b| {
                let out = Command::new(b).arg("-V").output().ok()?;
                super::nginx_tls::library(&String::from_utf8_lossy(&out.stderr))
            });
            self.ktls_at_start = super::nginx_tls::ktls_now();
        }
        let config = self.settings.render(&path, port, HostOs::Linux);
        let conf = path.join("nginx.conf");
        std::fs::write(&conf, &config).map_err(|e| ServerError::io(&conf, e))?;
        self.config = Some(config);
        self.run_dir = Some(dir);
        Ok(path)
    }

    fn start_error(&self, dir: &Path, what: &str) -> ServerError {
        let mut log = process::log_tail(&dir.join("stderr.log"), 5);
        let error_log = process::log_tail(&dir.join("error.log"), 5);
        if !error_log.is_empty() {
            log = format!("{log}\n{error_log}");
        }
        ServerError::Start {
            kind: KIND,
            message: format!("{what}; nginx said:\n{}", log.trim()),
        }
    }
}

impl Nginx {
    /// Whether nginx answers `GET /` with 200, over TLS with this start's
    /// CA where it serves TLS.
    fn answers(&self, addr: std::net::IpAddr, port: u16) -> bool {
        let Some(pem) = &self.ca_pem else {
            return match self.settings.http2 {
                true => answers_h2c(addr, port),
                false => answers(addr, port),
            };
        };
        let tls = crate::tls::client::ClientTls {
            verify: crate::tls::client::Verify::Ca {
                pem: pem.clone(),
                from: "this start's CA".into(),
            },
            versions: crate::tls::client::Versions::Both,
            resume: false,
            alpn: vec![b"http/1.1".to_vec()],
        };
        let (Ok(config), Ok(name)) = (
            tls.config(),
            crate::tls::client::server_name(&addr.to_string()),
        ) else {
            return false;
        };
        crate::tls::client::exchange(
            (addr, port).into(),
            &name,
            &config,
            Duration::from_millis(500),
            b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
            16,
        )
        .is_ok_and(|got| got.starts_with(b"HTTP/1.1 200"))
    }

    /// Whether the master has forked every worker asked for (a fixed
    /// count), so a trial never starts with part of the server missing.
    fn workers_started(&self, master: u32) -> bool {
        match self.settings.worker_processes {
            Workers::Count(n) => process::children_of(master).len() >= n as usize,
            Workers::Auto => true,
        }
    }
}

/// Sends `hello` to `addr:port` (200 ms to connect) and returns the
/// first `N` bytes of the answer (500 ms to read), or `None`.
fn first_bytes<const N: usize>(addr: std::net::IpAddr, port: u16, hello: &[u8]) -> Option<[u8; N]> {
    use std::io::{Read, Write};
    let mut s =
        std::net::TcpStream::connect_timeout(&(addr, port).into(), Duration::from_millis(200))
            .ok()?;
    s.set_read_timeout(Some(Duration::from_millis(500))).ok()?;
    s.write_all(hello).ok()?;
    let mut buf = [0u8; N];
    s.read_exact(&mut buf).ok()?;
    Some(buf)
}

/// Whether nginx answers HTTP/2's preface on `port` (cleartext, prior
/// knowledge, then an empty SETTINGS frame) with its SETTINGS frame.
pub fn answers_h2c(addr: std::net::IpAddr, port: u16) -> bool {
    let hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";
    first_bytes::<9>(addr, port, hello).is_some_and(|head| head[3] == 4)
}

/// Whether nginx answers `GET /` on `port` with an HTTP status line.
pub fn answers(addr: std::net::IpAddr, port: u16) -> bool {
    let get = b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    first_bytes::<12>(addr, port, get).is_some_and(|line| line.starts_with(b"HTTP/1.1 200"))
}

impl Server for Nginx {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn server_log(&self) -> Option<PathBuf> {
        self.run_dir.as_ref().map(|d| d.path().join("error.log"))
    }

    fn fixed_port(&self) -> Option<u16> {
        self.settings.port
    }

    fn start(
        &mut self,
        placement: &Placement,
        dataset: Option<&crate::model::Dataset>,
        shutdown: &Shutdown,
    ) -> Result<Endpoint, ServerError> {
        super::refuse_dataset(KIND, dataset)?;
        self.stop()?;
        let bin = self.binary()?;
        let port = match self.settings.port {
            Some(p) => p,
            None => process::free_port().map_err(|e| ServerError::io(Path::new("127.0.0.1"), e))?,
        };
        let addr = self.settings.listen_addr();
        let dir = self.prepare(port)?;
        let stderr =
            std::fs::File::create(dir.join("stderr.log")).map_err(|e| ServerError::io(&dir, e))?;
        let mut cmd = Command::new(bin);
        cmd.arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .args(["-g", "daemon off;"]);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        let server = ServerProcess::spawn(cmd, placement).map_err(|e| ServerError::io(&dir, e))?;
        let pid = server.pid();
        self.server = Some(server);
        self.port = Some(port);
        match process::wait_ready(
            Duration::from_secs(10),
            shutdown,
            || process::is_alive(pid),
            || self.answers(addr, port) && self.workers_started(pid),
        ) {
            Ok(()) => Ok(Endpoint {
                ca_pem: self.ca_pem.clone(),
                uri: format!(
                    "{}://{}",
                    if self.settings.tls { "https" } else { "http" },
                    std::net::SocketAddr::new(addr, port)
                ),
            }),
            Err(e) => {
                let err = match e {
                    WaitError::Died => self.start_error(&dir, "nginx exited during startup"),
                    WaitError::TimedOut => ServerError::NotReady {
                        kind: KIND,
                        waited_s: 10.0,
                        message: format!("no answer on {}", std::net::SocketAddr::new(addr, port)),
                    },
                    WaitError::Interrupted => ServerError::Interrupted,
                };
                self.stop()?;
                Err(err)
            }
        }
    }

    fn stop(&mut self) -> Result<(), ServerError> {
        let stopped = super::stop_process(
            KIND,
            &mut self.server,
            libc::SIGQUIT,
            Duration::from_secs(5),
        );
        self.port = None;
        self.run_dir = None;
        self.ca_pem = None;
        stopped
    }

    fn server_process(&self) -> Option<&ServerProcess> {
        self.server.as_ref()
    }

    fn listen_port(&self) -> Option<u16> {
        self.port
    }

    fn version(&self) -> Option<String> {
        let out = Command::new(self.binary().ok()?).arg("-v").output().ok()?;
        let text = String::from_utf8_lossy(&out.stderr);
        text.trim()
            .strip_prefix("nginx version: ")
            .map(str::to_string)
    }

    fn effective_config(&self) -> Option<String> {
        self.config.clone()
    }

    fn describe(&self) -> Option<super::ServerFacts> {
        let s = &self.settings;
        s.tls.then(|| {
            super::ServerFacts::new(super::nginx_tls::NginxTlsFacts {
                tls_library: self.tls_library.clone().unwrap_or_else(|| "unknown".into()),
                key: s.tls_key.name().into(),
                protocols: s.protocols().into(),
                ktls_asked: s.ktls,
                ktls: super::nginx_tls::ktls_since(&self.ktls_at_start),
            })
        })
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn settings_name_the_bad_field() {
        let err = NginxSettings::parse(&table("workers = 2"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `workers`"), "{err}");
        let err = NginxSettings::parse(&table("worker_processes = 0"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("worker_processes"), "{err}");
        assert!(NginxSettings::parse(&table("worker_processes = \"auto\"")).is_ok());
        assert!(NginxSettings::parse(&table("worker_processes = \"many\"")).is_err());
    }

    #[test]
    fn config_has_private_paths_and_loopback_listen() {
        let s = NginxSettings::parse(&table("reuseport = false")).unwrap();
        let conf = s.render(Path::new("/x"), 8080, HostOs::Linux);
        assert!(conf.contains("listen 127.0.0.1:8080 backlog=4096;"));
        assert!(conf.contains("pid \"/x/nginx.pid\";"));
        assert!(conf.contains("client_body_temp_path \"/x/tmp/body\";"));
        assert!(conf.contains("access_log off;"));
    }
}
