//! HTTPS for the viewer and the results service: a certificate chain and key in PEM files, served with rustls on
//! ring, through the same router as plain HTTP.

use crate::viewer_error::ViewerError;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{ServerConfig, crypto};
use tokio_rustls::server::TlsStream;
use tokio_rustls::{TlsAcceptor, rustls};

/// A server's TLS settings, from its certificate chain (leaf first) and private key as PEM text, read from the files
/// `certificate` and `key` (named in errors) by the caller's bounded reader.
pub fn load_tls(
    certificate: &Path,
    certificate_pem: &str,
    key: &Path,
    key_pem: &str,
) -> Result<Arc<ServerConfig>, ViewerError> {
    let bad =
        |option: &str, path: &Path, reason: String| ViewerError::Tls(format!("{option} {}: {reason}", path.display()));
    let chain = CertificateDer::pem_slice_iter(certificate_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad("--tls-cert", certificate, format!("not a PEM certificate file ({e})")))?;
    if chain.is_empty() {
        return Err(bad("--tls-cert", certificate, "holds no certificate".into()));
    }
    let key_der = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|e| bad("--tls-key", key, format!("not a PEM private key file ({e})")))?;
    let mut config = ServerConfig::builder_with_provider(Arc::new(crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| ViewerError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| ViewerError::Tls(format!("--tls-cert and --tls-key do not make a pair: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Connections accepted on a TCP listener after their TLS handshake, as axum serves them. Handshakes run apart from
/// the accept loop, each within 10 seconds, so one slow client holds up no other.
pub struct TlsListener {
    accepted: tokio::sync::mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
}

impl TlsListener {
    pub fn new(listener: TcpListener, config: Arc<rustls::ServerConfig>) -> std::io::Result<TlsListener> {
        let local = listener.local_addr()?;
        let (sender, accepted) = tokio::sync::mpsc::channel(64);
        let acceptor = TlsAcceptor::from(config);
        tokio::spawn(async move {
            while !sender.is_closed() {
                let Ok((socket, peer)) = listener.accept().await else {
                    // Out of file descriptors and the like: wait, then go on.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let (acceptor, sender) = (acceptor.clone(), sender.clone());
                tokio::spawn(async move {
                    if let Ok(Ok(stream)) = tokio::time::timeout(Duration::from_secs(10), acceptor.accept(socket)).await
                    {
                        let _ = sender.send((stream, peer)).await;
                    }
                });
            }
        });
        Ok(TlsListener { accepted, local })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.accepted.recv().await {
            Some(connection) => connection,
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.local)
    }
}
