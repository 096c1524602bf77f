//! A fake caller's world behind HTTP, for `execute http://…` tests.
//!
//! `POST /` with `{"id", "tool", "arguments", "rollout"}` answers
//! `{"result": {"served_by": "fake-world", "tool", "arguments", "call":
//! N}}`, where `N` counts the calls of the same rollout (`rollout_index`)
//! so far, 1-based: state kept per rollout. A few tool names misbehave on
//! purpose: `refuse` answers `{"error": {"kind": "not_found", "message",
//! "hint"}}`, `boom` answers HTTP 500, `garbage` a body that is not JSON,
//! `slow` waits two seconds first. `GET /` answers 200 (the start-up probe).
//! Every `POST` body is recorded.

use crate::served::Served;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default)]
struct Inner {
    recorded: Mutex<Vec<Value>>,
    calls: Mutex<BTreeMap<u64, u64>>,
}

/// A running fake world; it stops when dropped.
pub struct FakeWorld {
    served: Served,
    inner: Arc<Inner>,
}

impl std::fmt::Debug for FakeWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.served.debug("FakeWorld", f)
    }
}

impl FakeWorld {
    /// Starts the world on `127.0.0.1:0`.
    pub async fn start() -> std::io::Result<Self> {
        let inner = Arc::new(Inner::default());
        let app = Router::new()
            .route("/", get(probe).post(call))
            .with_state(Arc::clone(&inner));
        let served = Served::bind(Served::LOOPBACK, app).await?;
        Ok(Self { served, inner })
    }

    /// The URL to give `execute`: `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.served.addr())
    }

    /// Every call body received so far, in arrival order.
    pub fn requests(&self) -> Vec<Value> {
        self.inner
            .recorded
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }
}

async fn probe() -> &'static str {
    "fake world"
}

async fn call(State(inner): State<Arc<Inner>>, body: Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "body is not JSON").into_response();
    };
    if let Ok(mut r) = inner.recorded.lock() {
        r.push(request.clone());
    }
    let rollout = request
        .pointer("/rollout/rollout_index")
        .and_then(Value::as_u64)
        .unwrap_or(u64::MAX);
    let n = inner.calls.lock().map_or(0, |mut c| {
        let n = c.entry(rollout).or_insert(0);
        *n += 1;
        *n
    });
    let tool = request.get("tool").and_then(Value::as_str).unwrap_or("");
    match tool {
        "refuse" => axum::Json(
            json!({"error": {"kind": "not_found", "message": "no such thing",
                                                 "hint": "ask for another"}}),
        )
        .into_response(),
        "boom" => (StatusCode::INTERNAL_SERVER_ERROR, "{\"detail\": \"kaput\"}").into_response(),
        "garbage" => (StatusCode::OK, "<html>not json</html>").into_response(),
        _ => {
            if tool == "slow" {
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
            axum::Json(json!({"result": {"served_by": "fake-world", "tool": tool,
                                         "arguments": request.get("arguments"), "call": n}}))
            .into_response()
        }
    }
}
