//! What the fake servers share: a router served on a port by a task of its
//! own, which stops when the server is dropped.

use axum::Router;
use std::net::SocketAddr;

/// A router being served on a bound port.
pub(crate) struct Served {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Served {
    /// The loopback address with a port the system picks.
    pub(crate) const LOOPBACK: SocketAddr =
        SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);

    /// Binds `addr` and serves `app` there.
    pub(crate) async fn bind(addr: SocketAddr, app: Router) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, task })
    }

    /// The bound address.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A server's `Debug`: its type name and address (the state it holds
    /// is left out).
    pub(crate) fn debug(&self, name: &str, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(name)
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}
