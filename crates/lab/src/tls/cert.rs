//! A managed server's own certificate authority and certificate, made at
//! each start in its private directory (which goes with it): the CA's
//! certificate is public and travels to the load with the endpoint; the
//! keys never leave the directory.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// The server key's algorithm: ECDSA P-256 (the default) or RSA 2048.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub enum KeyType {
    /// ECDSA on P-256 with SHA-256.
    #[default]
    #[serde(rename = "ecdsa-p256")]
    EcdsaP256,
    /// RSA, 2048 bits, signing with PKCS#1 v1.5 and SHA-256. ring cannot
    /// generate RSA keys, so `openssl genpkey` makes it.
    #[serde(rename = "rsa-2048")]
    Rsa2048,
}

impl KeyType {
    /// The name a recipe gives it.
    pub fn name(self) -> &'static str {
        match self {
            KeyType::EcdsaP256 => "ecdsa-p256",
            KeyType::Rsa2048 => "rsa-2048",
        }
    }
}

/// The files a start wrote, all inside its directory.
#[derive(Clone, Debug)]
pub struct ServerCert {
    /// The CA's certificate (PEM), which verifies the server's.
    pub ca_pem: String,
    /// `DIR/tls/ca.pem`.
    pub ca_file: PathBuf,
    /// `DIR/tls/server.pem`: the server's certificate.
    pub cert_file: PathBuf,
    /// `DIR/tls/server.key`: its key, mode 0600.
    pub key_file: PathBuf,
}

/// Why no certificate could be made.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// rcgen refused the parameters or the key.
    #[error("could not make the run's certificate: {0}")]
    Make(#[from] rcgen::Error),
    /// A file could not be written.
    #[error("could not write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// `openssl genpkey` (for an RSA key) failed or is missing.
    #[error("could not make an RSA key with `openssl genpkey`: {0}; install the `openssl` package (scripts/setup.sh does) or use key = \"ecdsa-p256\"")]
    Openssl(String),
}

/// Makes a CA and a certificate it signs for `names` (DNS names) and
/// `ips`, and writes them into `dir/tls/`.
pub fn make(
    dir: &Path,
    key: KeyType,
    names: &[&str],
    ips: &[IpAddr],
) -> Result<ServerCert, CertError> {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa,
        KeyUsagePurpose, SanType,
    };
    let tls = dir.join("tls");
    std::fs::create_dir_all(&tls).map_err(|source| CertError::Write {
        path: tls.clone(),
        source,
    })?;
    let ca_key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    // A name of its own, so that another start's CA is an unknown issuer
    // to a client, not a bad signature by the same name.
    let tag: u64 = rand::random();
    ca.distinguished_name
        .push(DnType::CommonName, format!("scalelab run CA {tag:016x}"));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key)?;
    let server_key = server_key(&tls, key)?;
    let mut leaf = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())?;
    leaf.subject_alt_names
        .extend(ips.iter().map(|ip| SanType::IpAddress(*ip)));
    leaf.distinguished_name.push(
        DnType::CommonName,
        names.first().copied().unwrap_or("scalelab"),
    );
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    leaf.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let leaf_cert = leaf.signed_by(&server_key, &ca_cert, &ca_key)?;
    let out = ServerCert {
        ca_pem: ca_cert.pem(),
        ca_file: tls.join("ca.pem"),
        cert_file: tls.join("server.pem"),
        key_file: tls.join("server.key"),
    };
    write(&out.ca_file, &out.ca_pem, 0o644)?;
    write(&out.cert_file, &leaf_cert.pem(), 0o644)?;
    write(&out.key_file, &server_key.serialize_pem(), 0o600)?;
    Ok(out)
}

/// The server's key pair: made here (ECDSA) or by `openssl genpkey`
/// inside `tls` (RSA).
fn server_key(tls: &Path, key: KeyType) -> Result<rcgen::KeyPair, CertError> {
    match key {
        KeyType::EcdsaP256 => Ok(rcgen::KeyPair::generate_for(
            &rcgen::PKCS_ECDSA_P256_SHA256,
        )?),
        KeyType::Rsa2048 => {
            let out = std::process::Command::new("openssl")
                .args([
                    "genpkey",
                    "-algorithm",
                    "RSA",
                    "-pkeyopt",
                    "rsa_keygen_bits:2048",
                ])
                .current_dir(tls)
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| CertError::Openssl(e.to_string()))?;
            if !out.status.success() {
                return Err(CertError::Openssl(
                    String::from_utf8_lossy(&out.stderr).trim().to_string(),
                ));
            }
            let pem = String::from_utf8_lossy(&out.stdout);
            Ok(rcgen::KeyPair::from_pem_and_sign_algo(
                &pem,
                &rcgen::PKCS_RSA_SHA256,
            )?)
        }
    }
}

fn write(path: &Path, text: &str, mode: u32) -> Result<(), CertError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let err = |source| CertError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)
        .map_err(err)?;
    f.write_all(text.as_bytes()).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_stays_private_and_the_certificate_chains_to_the_ca() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let c = make(dir.path(), KeyType::EcdsaP256, &["localhost"], &[ip]).unwrap();
        let mode = std::fs::metadata(&c.key_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(c.key_file.starts_with(dir.path()));
        assert!(std::fs::read_to_string(&c.key_file)
            .unwrap()
            .contains("PRIVATE KEY"));
        let verified = super::super::client::verifies(&c.ca_pem, &c.cert_file, "127.0.0.1");
        assert_eq!(verified, Ok(()));
        let other = make(
            &dir.path().join("b"),
            KeyType::EcdsaP256,
            &["localhost"],
            &[ip],
        )
        .unwrap();
        let err =
            super::super::client::verifies(&other.ca_pem, &c.cert_file, "127.0.0.1").unwrap_err();
        assert!(err.contains("UnknownIssuer"), "{err}");
        let err =
            super::super::client::verifies(&c.ca_pem, &c.cert_file, "example.org").unwrap_err();
        assert!(err.contains("NotValidForName"), "{err}");
        let rsa = make(
            &dir.path().join("rsa"),
            KeyType::Rsa2048,
            &["localhost"],
            &[ip],
        )
        .unwrap();
        let key = std::fs::read_to_string(&rsa.key_file).unwrap();
        let der_len = key
            .lines()
            .filter(|l| !l.starts_with("-----"))
            .map(str::len)
            .sum::<usize>();
        assert!(
            der_len > 1500,
            "a 2048-bit RSA key's PEM, not P-256's: {der_len}"
        );
        let verified = super::super::client::verifies(&rsa.ca_pem, &rsa.cert_file, "127.0.0.1");
        assert_eq!(verified, Ok(()));
    }
}
