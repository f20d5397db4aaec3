//! HTTP plumbing shared by the roles: bodies with limits and a global byte budget, the
//! connection limits, peer and admin authentication, fallbacks.

use crate::problem::{AdminAuth, Rejection};
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Largest body of a report upload (one report is 88 bytes).
pub const REPORT_BODY_LIMIT: usize = 1024;
/// Largest body of a task request.
pub const JSON_BODY_LIMIT: usize = 64 * 1024;
/// Largest body of a batch (the wire format's bound plus its header).
pub const BATCH_BODY_LIMIT: usize =
    crate::wire::BATCH_HEADER_LEN + crate::wire::MAX_BATCH_REPORTS * crate::wire::ITEM_LEN;

/// The service's limits against strangers on the network (`blanket serve` flags; defaults
/// in [`Limits::default`], documented in docs/service.md, "Limits").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Time a connection has to send a request's headers (hyper's header read timeout):
    /// a connection trickling its headers is closed after it.
    pub header_timeout: Duration,
    /// Time a request has from its headers to its answer (body read and handling); above
    /// the relay's longest long poll ([`crate::relay::routes::MAX_WAIT_MS`]).
    pub request_timeout: Duration,
    /// Connections served at once; further connections wait in the listen backlog.
    pub max_connections: usize,
    /// Bytes of request bodies held at once over all requests ([`BodyBudget`]).
    pub body_budget: usize,
}

/// Default of `--header-timeout-secs`.
pub const DEFAULT_HEADER_TIMEOUT_SECS: u64 = 10;
/// Default of `--request-timeout-secs` (the longest long poll is 120 s).
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 150;
/// Default of `--max-connections`.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Default of `--body-budget-mib`.
pub const DEFAULT_BODY_BUDGET_MIB: usize = 512;
/// How long a request waits for room in the body budget before `503 overloaded`.
pub const BUDGET_WAIT: Duration = Duration::from_secs(5);

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(DEFAULT_HEADER_TIMEOUT_SECS),
            request_timeout: Duration::from_secs(DEFAULT_REQUEST_TIMEOUT_SECS),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            body_budget: DEFAULT_BODY_BUDGET_MIB << 20,
        }
    }
}

impl Limits {
    /// Checks the limits, naming the flag and its range.
    pub fn check(&self) -> Result<(), Rejection> {
        let out = |field: &str, allowed: String, value: String| Rejection::OutOfRange {
            field: field.into(),
            allowed,
            value,
        };
        let min_request = crate::relay::routes::MAX_WAIT_MS / 1000 + 1;
        if self.header_timeout.is_zero() || self.header_timeout > Duration::from_secs(3600) {
            return Err(out(
                "header-timeout-secs",
                "1..=3600".into(),
                self.header_timeout.as_secs().to_string(),
            ));
        }
        if self.request_timeout < Duration::from_secs(min_request)
            || self.request_timeout > Duration::from_secs(86_400)
        {
            return Err(out(
                "request-timeout-secs",
                format!("{min_request}..=86400 (above the longest long poll)"),
                self.request_timeout.as_secs().to_string(),
            ));
        }
        if !(1..=1 << 20).contains(&self.max_connections) {
            return Err(out(
                "max-connections",
                "1..=1048576".into(),
                self.max_connections.to_string(),
            ));
        }
        let min_budget = BATCH_BODY_LIMIT.div_ceil(1 << 20);
        if self.body_budget < min_budget << 20 || self.body_budget > 1 << 40 {
            return Err(out(
                "body-budget-mib",
                format!("{min_budget}..=1048576 (at least one largest batch)"),
                (self.body_budget >> 20).to_string(),
            ));
        }
        Ok(())
    }
}

/// The bytes of request bodies the process holds at once, all routes together: a semaphore
/// over KiB. A body reserves its declared length (else its route's limit) before it is read
/// and keeps it until the request is answered ([`read_body`]); a request that finds no room
/// within [`BUDGET_WAIT`] is answered `503 overloaded`.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    kib: Arc<Semaphore>,
    total_kib: usize,
}

impl BodyBudget {
    /// A budget of `bytes`.
    pub fn new(bytes: usize) -> Self {
        let total_kib = bytes.div_ceil(1024).min(Semaphore::MAX_PERMITS);
        Self {
            kib: Arc::new(Semaphore::new(total_kib)),
            total_kib,
        }
    }

    /// KiB not reserved now.
    pub fn available_kib(&self) -> usize {
        self.kib.available_permits()
    }

    /// Reserves `bytes` (rounded up to KiB).
    pub async fn reserve(&self, bytes: usize) -> Result<OwnedSemaphorePermit, Rejection> {
        let kib = bytes.div_ceil(1024).max(1);
        let busy = || {
            Rejection::Overloaded(format!(
                "no room for a {bytes}-byte body in the server's request budget; retry later"
            ))
        };
        let Ok(n) = u32::try_from(kib) else {
            return Err(busy());
        };
        if kib > self.total_kib {
            return Err(busy());
        }
        match tokio::time::timeout(BUDGET_WAIT, Arc::clone(&self.kib).acquire_many_owned(n)).await {
            Ok(Ok(p)) => Ok(p),
            _ => Err(busy()),
        }
    }
}

/// Reads a request body of at most `limit` bytes, called after every check that does not
/// need the body (task, client, tokens): a declared length over `limit` is refused without
/// reading a byte (413); the body's bytes are reserved in `budget` (its declared length, else
/// `limit`); reading stops at `limit`. The permit is kept by the caller while it uses the body.
pub async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    budget: Option<&BodyBudget>,
) -> Result<(Bytes, Option<OwnedSemaphorePermit>), Rejection> {
    let declared = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(Rejection::TooLarge { limit });
    }
    let reserve = declared.map_or(limit, |n| n as usize);
    let permit = match budget {
        Some(b) => Some(b.reserve(reserve).await?),
        None => None,
    };
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|e| {
        let detail = e.to_string();
        if detail.contains("length limit exceeded") {
            Rejection::TooLarge { limit }
        } else {
            Rejection::Malformed {
                what: "body",
                detail,
            }
        }
    })?;
    Ok((bytes, permit))
}

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
