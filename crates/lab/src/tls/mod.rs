//! TLS for the managed servers and the load generators.
//!
//! - `cert`: each managed server start's own CA and certificate, written
//!   in its private directory.
//! - `client`: the rustls client configuration the drivers share, the
//!   server name, a probe handshake and what it negotiated.
//!
//! rustls is used through its connection type as a sans-IO state machine
//! (`read_tls`, `process_new_packets`, `write_tls`) under the drivers' own
//! mio loops: no runtime, no thread per connection.

pub mod cert;
pub mod client;
