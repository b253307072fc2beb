//! The TLS crypto provider of every HTTPS client ag makes (the model
//! client's reqwest and rmcp's): rustls with ring, installed as the process
//! default, since both are built without a provider of their own (the
//! default one would compile aws-lc as well). Certificates are checked
//! against the system's store (rustls-platform-verifier), so a local CA
//! (a TLS proxy's) in /etc/ssl is trusted as curl trusts it.

/// Installs ring as the process's default provider; a second call, or one
/// after another provider was installed, changes nothing.
pub fn install_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
