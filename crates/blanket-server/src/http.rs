//! HTTP plumbing shared by the roles: bodies with limits, peer authentication, fallbacks.

use crate::problem::Rejection;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode};

/// Largest body of a report upload (one report is 88 bytes).
pub const REPORT_BODY_LIMIT: usize = 1024;
/// Largest body of a task request.
pub const JSON_BODY_LIMIT: usize = 64 * 1024;
/// Largest body of a batch (the wire format's bound plus its header).
pub const BATCH_BODY_LIMIT: usize =
    crate::wire::BATCH_HEADER_LEN + crate::wire::MAX_BATCH_REPORTS * crate::wire::SEALED_LEN;

/// The body, or the typed reason it could not be read (too large, cut off).
pub fn body(b: Result<Bytes, BytesRejection>, limit: usize) -> Result<Bytes, Rejection> {
    b.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Rejection::TooLarge { limit }
        } else {
            Rejection::Malformed {
                what: "body",
                detail: e.body_text(),
            }
        }
    })
}

/// Parses a JSON body into `T`, naming what is wrong (and the field, as a path, when one
/// is: `budget_eps: invalid type ...`).
pub fn json<T: serde::de::DeserializeOwned>(what: &'static str, b: &[u8]) -> Result<T, Rejection> {
    let malformed = |detail: String| Rejection::Malformed { what, detail };
    let mut de = serde_json::Deserializer::from_slice(b);
    let v: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            malformed(e.inner().to_string())
        } else {
            malformed(format!("{path}: {}", e.inner()))
        }
    })?;
    // Nothing but whitespace after the value (as `serde_json::from_slice`).
    de.end().map_err(|e| malformed(e.to_string()))?;
    Ok(v)
}

/// Checks `Authorization: Bearer TOKEN` against the peer token (constant-time comparison).
pub fn check_peer(headers: &HeaderMap, token: &str) -> Result<(), Rejection> {
    let got = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or(Rejection::Unauthorized)?;
    let (a, b) = (got.as_bytes(), token.as_bytes());
    let diff = a
        .iter()
        .zip(b)
        .fold((a.len() ^ b.len()) as u8, |d, (x, y)| d | (x ^ y));
    if diff == 0 && a.len() == b.len() {
        Ok(())
    } else {
        Err(Rejection::Unauthorized)
    }
}

/// Answer for a route that does not exist.
pub async fn not_found(uri: axum::http::Uri) -> Rejection {
    Rejection::NotFound(uri.path().to_string())
}

/// Answer for a known route called with another method.
pub async fn method_not_allowed() -> Rejection {
    Rejection::MethodNotAllowed
}

/// Seconds since the Unix epoch.
pub fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
