//! Test support only: a throwaway nginx for the HTTP load driver's tests
//! (the real nginx target is `scalelab::target::nginx`). Private tempdir,
//! free loopback port, one worker, `return 200 "{}"` at `/`; stopped with
//! SIGQUIT by PID on drop.

use scalelab::shutdown::Shutdown;
use scalelab::target::process::{free_port, is_alive, stop_pid, tcp_accepts, wait_ready};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct TestNginx {
    pub port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

impl TestNginx {
    /// Starts nginx able to hold `connections` client connections.
    pub fn start(connections: u32) -> TestNginx {
        let mut last_error = String::new();
        // A free port can be taken by someone else before nginx binds it.
        for _ in 0..3 {
            match Self::try_start(connections) {
                Ok(n) => return n,
                Err(e) => last_error = e,
            }
        }
        panic!("test nginx did not start: {last_error}");
    }

    fn try_start(connections: u32) -> Result<TestNginx, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let port = free_port().map_err(|e| e.to_string())?;
        let d = dir.path().display();
        let conf = format!(
            "daemon off;\nmaster_process on;\nworker_processes 1;\n\
             worker_rlimit_nofile {files};\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections {wc}; }}\n\
             http {{\n  access_log off;\n  keepalive_requests 1000000;\n\
               client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
               fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n\
               scgi_temp_path {d}/scgi;\n\
               server {{\n    listen 127.0.0.1:{port} reuseport backlog=4096;\n\
                 location = / {{ return 200 \"{{}}\"; }}\n  }}\n}}\n",
            // nginx closes idle keep-alive connections ("reusing
            // connections") once fewer than 1/16 of worker_connections are
            // free, so leave plenty.
            wc = 2 * connections + 256,
            files = 2 * connections + 512,
        );
        let conf_path = dir.path().join("nginx.conf");
        std::fs::write(&conf_path, conf).map_err(|e| e.to_string())?;
        let child = Command::new("nginx")
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(&conf_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run nginx: {e}"))?;
        let pid = child.id();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let nginx = TestNginx {
            port,
            child,
            _dir: dir,
        };
        let ready = wait_ready(
            Duration::from_secs(10),
            &Shutdown::new(),
            || is_alive(pid),
            || tcp_accepts(addr),
        );
        match ready {
            Ok(()) => Ok(nginx),
            Err(e) => Err(format!(
                "{e:?}: {}",
                std::fs::read_to_string(nginx._dir.path().join("error.log")).unwrap_or_default()
            )),
        }
    }

    /// nginx's error log, for failure messages.
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("error.log")).unwrap_or_default()
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }
}

impl Drop for TestNginx {
    fn drop(&mut self) {
        stop_pid(self.child.id(), libc::SIGQUIT, Duration::from_secs(5));
        let _ = self.child.try_wait();
    }
}
