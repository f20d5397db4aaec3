//! HTTP plumbing shared by the roles: bodies with limits, peer and admin authentication,
//! fallbacks.

use crate::problem::{AdminAuth, Rejection};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode};

/// Largest body of a report upload (one report is 88 bytes).
pub const REPORT_BODY_LIMIT: usize = 1024;
/// Largest body of a task request.
pub const JSON_BODY_LIMIT: usize = 64 * 1024;
/// Largest body of a batch (the wire format's bound plus its header).
pub const BATCH_BODY_LIMIT: usize =
    crate::wire::BATCH_HEADER_LEN + crate::wire::MAX_BATCH_REPORTS * crate::wire::ITEM_LEN;

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

/// The bearer token of a request, if it has one.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// Whether two secrets are equal, in time independent of where they differ and of their
/// lengths: both are hashed (SHA-256) and the digests compared without an early exit.
pub fn secret_eq(a: &[u8], b: &[u8]) -> bool {
    use sha2::{Digest, Sha256};
    let (da, db) = (Sha256::digest(a), Sha256::digest(b));
    da.iter().zip(db.iter()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// Checks `Authorization: Bearer TOKEN` against the peer token (constant-time comparison).
pub fn check_peer(headers: &HeaderMap, token: &str) -> Result<(), Rejection> {
    let got = bearer(headers).ok_or(Rejection::Unauthorized)?;
    if secret_eq(got.as_bytes(), token.as_bytes()) {
        Ok(())
    } else {
        Err(Rejection::Unauthorized)
    }
}

/// Checks `Authorization: Bearer TOKEN` against the admin token of a state-changing admin
/// route (constant-time comparison): 401 `admin-token-missing` or `admin-token-wrong`.
pub fn check_admin(headers: &HeaderMap, token: &str) -> Result<(), Rejection> {
    let got = bearer(headers).ok_or(Rejection::AdminUnauthorized(AdminAuth::Missing))?;
    if secret_eq(got.as_bytes(), token.as_bytes()) {
        Ok(())
    } else {
        Err(Rejection::AdminUnauthorized(AdminAuth::Wrong))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked_exactly() {
        assert!(secret_eq(b"abc", b"abc"));
        assert!(!secret_eq(b"abc", b"abd"));
        assert!(!secret_eq(b"abc", b"abcd"));
        assert!(!secret_eq(b"", b"a"));
        let mut h = HeaderMap::new();
        assert_eq!(
            check_admin(&h, "t"),
            Err(Rejection::AdminUnauthorized(AdminAuth::Missing))
        );
        h.insert(
            axum::http::header::AUTHORIZATION,
            "Bearer u".parse().unwrap(),
        );
        assert_eq!(
            check_admin(&h, "t"),
            Err(Rejection::AdminUnauthorized(AdminAuth::Wrong))
        );
        assert_eq!(check_peer(&h, "t"), Err(Rejection::Unauthorized));
        assert_eq!(check_admin(&h, "u"), Ok(()));
    }
}
