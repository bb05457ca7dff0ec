//! The startup handshake, sans-IO: StartupMessage out, authentication
//! exchanges (trust, cleartext, MD5, SCRAM-SHA-256) until ReadyForQuery.

use super::codec::{server_error, Frame, PgError};
use super::conninfo::ConnConfig;
use bytes::BytesMut;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

/// Where the handshake stands after a message.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress {
    /// More messages are needed (anything queued in `out` must be sent).
    Continue,
    /// ReadyForQuery arrived: the connection can take queries.
    Ready,
}

/// The startup and authentication exchange (trust, cleartext, MD5 or
/// SCRAM-SHA-256), fed one backend message at a time.
pub struct Handshake {
    user: String,
    password: Option<String>,
    scram: Option<ScramSha256>,
}

impl Handshake {
    /// Queues the StartupMessage in `out`.
    pub fn start(cfg: &ConnConfig, out: &mut BytesMut) -> Result<Handshake, PgError> {
        let params = [
            ("user", cfg.user.as_str()),
            ("database", cfg.dbname.as_str()),
            ("application_name", cfg.application_name.as_str()),
            ("client_encoding", "UTF8"),
        ];
        frontend::startup_message(params, out)
            .map_err(|e| PgError::Protocol(format!("startup message: {e}")))?;
        Ok(Handshake {
            user: cfg.user.clone(),
            password: cfg.password.clone(),
            scram: None,
        })
    }

    /// Handles one backend message, queueing any reply in `out`.
    pub fn on_frame(&mut self, frame: Frame<'_>, out: &mut BytesMut) -> Result<Progress, PgError> {
        match frame.tag {
            b'E' => return Err(server_error(frame.body)),
            b'Z' => return Ok(Progress::Ready),
            // ParameterStatus, BackendKeyData, NoticeResponse.
            b'S' | b'K' | b'N' => return Ok(Progress::Continue),
            b'R' => {}
            other => {
                return Err(PgError::Protocol(format!(
                    "unexpected message `{}` during startup",
                    other as char
                )))
            }
        }
        match frame.decode()? {
            Message::AuthenticationOk => {}
            Message::AuthenticationCleartextPassword => {
                let pw = self.password()?;
                frontend::password_message(pw.as_bytes(), out)?;
            }
            Message::AuthenticationMd5Password(body) => {
                let hash = md5_hash(
                    self.user.as_bytes(),
                    self.password()?.as_bytes(),
                    body.salt(),
                );
                frontend::password_message(hash.as_bytes(), out)?;
            }
            Message::AuthenticationSasl(_) => {
                // Body: auth type 10, then NUL-terminated mechanism names.
                let names = frame.body.get(4..).unwrap_or_default();
                let scram_offered = names
                    .split(|&b| b == 0)
                    .any(|m| m == SCRAM_SHA_256.as_bytes());
                if !scram_offered {
                    return Err(PgError::Auth(
                        "the server offers no SASL mechanism scalelab supports (SCRAM-SHA-256)"
                            .into(),
                    ));
                }
                let scram =
                    ScramSha256::new(self.password()?.as_bytes(), ChannelBinding::unsupported());
                frontend::sasl_initial_response(SCRAM_SHA_256, scram.message(), out)?;
                self.scram = Some(scram);
            }
            Message::AuthenticationSaslContinue(body) => {
                let scram = self.scram_mut()?;
                scram
                    .update(body.data())
                    .map_err(|e| PgError::Auth(e.to_string()))?;
                frontend::sasl_response(scram.message(), out)?;
            }
            Message::AuthenticationSaslFinal(body) => {
                self.scram_mut()?
                    .finish(body.data())
                    .map_err(|e| PgError::Auth(format!("server signature: {e}")))?;
            }
            _ => {
                return Err(PgError::Auth(
                    "the server asks for an authentication method scalelab does not support \
                     (use trust, password, md5 or scram-sha-256 in pg_hba.conf)"
                        .into(),
                ))
            }
        }
        Ok(Progress::Continue)
    }

    fn password(&self) -> Result<&str, PgError> {
        self.password.as_deref().ok_or_else(|| {
            PgError::Auth(format!(
                "the server wants a password for user `{}`; add password=... to the \
                 connection string or set PGPASSWORD",
                self.user
            ))
        })
    }

    fn scram_mut(&mut self) -> Result<&mut ScramSha256, PgError> {
        self.scram
            .as_mut()
            .ok_or_else(|| PgError::Protocol("SASL continuation without a SASL start".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::codec::RecvBuf;
    use super::*;

    fn config(password: Option<&str>) -> ConnConfig {
        let mut c =
            ConnConfig::parse_with_env("host=127.0.0.1 user=bench dbname=db", |_| None).unwrap();
        c.password = password.map(str::to_string);
        c
    }

    fn frame_of(bytes: &[u8], f: impl FnOnce(Frame<'_>)) {
        let mut buf = RecvBuf::with_capacity(256);
        buf.spare()[..bytes.len()].copy_from_slice(bytes);
        buf.filled(bytes.len());
        f(buf.next_frame().unwrap().unwrap());
    }

    #[test]
    fn startup_then_md5_then_ready() {
        let mut out = BytesMut::new();
        let mut h = Handshake::start(&config(Some("pw")), &mut out).unwrap();
        assert!(out.windows(5).any(|w| w == b"bench"));
        out.clear();
        // AuthenticationMD5Password with salt 1,2,3,4.
        frame_of(&[b'R', 0, 0, 0, 12, 0, 0, 0, 5, 1, 2, 3, 4], |f| {
            assert_eq!(h.on_frame(f, &mut out).unwrap(), Progress::Continue);
        });
        let expect = md5_hash(b"bench", b"pw", [1, 2, 3, 4]);
        assert_eq!(out[0], b'p');
        assert!(out.windows(expect.len()).any(|w| w == expect.as_bytes()));
        frame_of(&[b'Z', 0, 0, 0, 5, b'I'], |f| {
            assert_eq!(h.on_frame(f, &mut out).unwrap(), Progress::Ready);
        });
    }

    #[test]
    fn a_password_request_without_a_password_says_how_to_give_one() {
        let mut out = BytesMut::new();
        let mut h = Handshake::start(&config(None), &mut out).unwrap();
        frame_of(&[b'R', 0, 0, 0, 8, 0, 0, 0, 3], |f| {
            let e = h.on_frame(f, &mut out).unwrap_err().to_string();
            assert!(e.contains("PGPASSWORD"), "{e}");
        });
    }

    #[test]
    fn a_startup_error_is_reported() {
        let mut out = BytesMut::new();
        let mut h = Handshake::start(&config(None), &mut out).unwrap();
        let body = b"SFATAL\0C57P03\0Mthe database system is starting up\0\0";
        let mut msg = vec![b'E'];
        msg.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        msg.extend_from_slice(body);
        frame_of(&msg, |f| {
            let e = h.on_frame(f, &mut out).unwrap_err();
            assert_eq!(e.code(), Some("57P03"));
        });
    }
}
