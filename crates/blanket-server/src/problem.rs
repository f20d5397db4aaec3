//! Typed rejection reasons and their HTTP form: a status code and an RFC 9457 problem body
//! (`application/problem+json`). Every refusal of client or peer input is a [`Rejection`];
//! a 5xx is only ever a [`Rejection::Storage`], [`Rejection::Overloaded`] or
//! [`Rejection::PeerUnavailable`] (our side), never a reaction to what one client sent.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The media type of a problem body (RFC 9457, Section 3).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Rejection {
    /// No task with this id (or no such route).
    #[error("unknown task {0}")]
    UnknownTask(String),
    /// The report names another task than the URL it was sent to.
    #[error("the report is for task {report}, sent to task {url}")]
    WrongTask {
        /// The task id inside the report.
        report: String,
        /// The task id in the URL.
        url: String,
    },
    /// The body cannot be decoded (bad framing, bad JSON, bad hex, ...).
    #[error("malformed {what}: {detail}")]
    Malformed {
        /// What was being decoded.
        what: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// A length field or the body length disagrees with the format.
    #[error("wrong length of {field}: expected {expected} bytes, got {got}")]
    WrongLength {
        /// The field whose length is wrong.
        field: &'static str,
        /// The length the format requires.
        expected: usize,
        /// The length received.
        got: usize,
    },
    /// A wire format version this server does not speak.
    #[error("unsupported wire version {got} (this server speaks {supported})")]
    UnsupportedVersion {
        /// The version received.
        got: u8,
        /// The version spoken here.
        supported: u8,
    },
    /// A parameter outside its allowed range.
    #[error("{field} must be {allowed}, got {value}")]
    OutOfRange {
        /// The field, as named in the API.
        field: String,
        /// The allowed range, in words.
        allowed: String,
        /// The value received.
        value: String,
    },
    /// No parameters reach the requested guarantee.
    #[error("the target cannot be certified: {0}")]
    Infeasible(String),
    /// This report id (or batch id) was already accepted.
    #[error("duplicate {0}: already accepted")]
    Duplicate(&'static str),
    /// The task no longer accepts reports (its deadline passed).
    #[error("task {0} is closed")]
    TaskClosed(String),
    /// A release would exceed the task's privacy budget.
    #[error("{0}")]
    BudgetExhausted(String),
    /// Nothing to release yet.
    #[error("{0}")]
    NothingToRelease(String),
    /// The body exceeds this endpoint's limit.
    #[error("body too large: at most {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// A peer-only endpoint called without the peer's token.
    #[error("this endpoint is for the peer role only: missing or wrong bearer token")]
    Unauthorized,
    /// A state-changing admin route (task create, release) called without the operator's
    /// admin token (`reason`: `admin-token-missing` or `admin-token-wrong`).
    #[error("{}", admin_detail(*.0))]
    AdminUnauthorized(AdminAuth),
    /// Wrong content type.
    #[error("unsupported media type: expected {0}")]
    UnsupportedMediaType(&'static str),
    /// No such route.
    #[error("no route {0}")]
    NotFound(String),
    /// The route exists, not with this method.
    #[error("method not allowed on this route")]
    MethodNotAllowed,
    /// The relay refused a client's protocol message (`reason`: `wrong-round`, `replay`,
    /// `sender-mismatch`, `wrong-run`, `not-expected`, `equivocation`, `wrong-kind`,
    /// `misaddressed`, `malformed-envelope`, `not-started`, `run-over`).
    #[error("{detail}")]
    RelayRefused {
        /// The typed reason.
        reason: &'static str,
        /// What happened.
        detail: String,
    },
    /// A relay request whose signature does not verify under the registered key of the
    /// client it names.
    #[error("bad signature: {0}")]
    BadSignature(String),
    /// A registration for a relay task with admission tokens without a valid enrollment
    /// token (`reason`: `admission-token-missing` or `admission-token-wrong`).
    #[error("{detail}")]
    AdmissionRefused {
        /// The typed reason.
        reason: &'static str,
        /// What happened.
        detail: String,
    },
    /// The database failed (our side).
    #[error("storage error: {0}")]
    Storage(String),
    /// The server holds as many request bytes as its budget allows (`--body-budget-mib`):
    /// try again shortly (our side; `Retry-After`).
    #[error("the server is busy: {0}")]
    Overloaded(String),
    /// The request took longer than the server's request timeout (`--request-timeout-secs`).
    #[error("the request took longer than {seconds} s")]
    RequestTimeout {
        /// The timeout in seconds.
        seconds: u64,
    },
    /// The other role could not be reached (our side).
    #[error("peer unavailable: {0}")]
    PeerUnavailable(String),
}

/// Why an admin request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminAuth {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A bearer token other than the admin token.
    Wrong,
}

fn admin_detail(a: AdminAuth) -> &'static str {
    match a {
        AdminAuth::Missing => {
            "this route changes state and needs the admin token: send `Authorization: Bearer \
             TOKEN` (the CLI: --admin-token-file PATH or BLANKET_ADMIN_TOKEN)"
        }
        AdminAuth::Wrong => "the bearer token is not this server's admin token",
    }
}

impl Rejection {
    /// The reason's stable name (the problem type's last path segment and `reason` key).
    pub fn reason(&self) -> &'static str {
        match self {
            Self::UnknownTask(_) => "unknown-task",
            Self::WrongTask { .. } => "wrong-task",
            Self::Malformed { .. } => "malformed",
            Self::WrongLength { .. } => "wrong-length",
            Self::UnsupportedVersion { .. } => "unsupported-version",
            Self::OutOfRange { .. } => "out-of-range",
            Self::Infeasible(_) => "infeasible",
            Self::Duplicate(_) => "duplicate",
            Self::TaskClosed(_) => "task-closed",
            Self::BudgetExhausted(_) => "budget-exhausted",
            Self::NothingToRelease(_) => "nothing-to-release",
            Self::TooLarge { .. } => "too-large",
            Self::Unauthorized => "unauthorized",
            Self::AdminUnauthorized(AdminAuth::Missing) => "admin-token-missing",
            Self::AdminUnauthorized(AdminAuth::Wrong) => "admin-token-wrong",
            Self::UnsupportedMediaType(_) => "unsupported-media-type",
            Self::NotFound(_) => "not-found",
            Self::MethodNotAllowed => "method-not-allowed",
            Self::RelayRefused { reason, .. } => reason,
            Self::BadSignature(_) => "bad-signature",
            Self::AdmissionRefused { reason, .. } => reason,
            Self::Storage(_) => "storage",
            Self::Overloaded(_) => "overloaded",
            Self::RequestTimeout { .. } => "request-timeout",
            Self::PeerUnavailable(_) => "peer-unavailable",
        }
    }

    /// The HTTP status of the reason.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::UnknownTask(_) => StatusCode::NOT_FOUND,
            Self::WrongTask { .. }
            | Self::Malformed { .. }
            | Self::WrongLength { .. }
            | Self::UnsupportedVersion { .. } => StatusCode::BAD_REQUEST,
            Self::OutOfRange { .. } | Self::Infeasible(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Duplicate(_) | Self::BudgetExhausted(_) | Self::NothingToRelease(_) => {
                StatusCode::CONFLICT
            }
            Self::TaskClosed(_) => StatusCode::GONE,
            Self::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Unauthorized | Self::AdminUnauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::RelayRefused { reason, .. } => match *reason {
                "malformed-envelope" => StatusCode::BAD_REQUEST,
                "run-over" => StatusCode::GONE,
                _ => StatusCode::CONFLICT,
            },
            Self::BadSignature(_) | Self::AdmissionRefused { .. } => StatusCode::UNAUTHORIZED,
            Self::Storage(_) | Self::Overloaded(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::RequestTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            Self::PeerUnavailable(_) => StatusCode::BAD_GATEWAY,
        }
    }

    /// The RFC 9457 body. A storage failure is answered with [`STORAGE_DETAIL`] only: its
    /// cause (database paths, SQL, driver messages) goes to the server's log
    /// ([`IntoResponse`]), never to the caller.
    pub fn problem(&self) -> Problem {
        let status = self.status();
        Problem {
            problem_type: format!("urn:blanket:problem:{}", self.reason()),
            title: status.canonical_reason().unwrap_or("error").to_string(),
            status: status.as_u16(),
            detail: match self {
                Self::Storage(_) => STORAGE_DETAIL.to_string(),
                _ => self.to_string(),
            },
            reason: self.reason().to_string(),
        }
    }
}

impl From<blanket::params::ParamError> for Rejection {
    fn from(e: blanket::params::ParamError) -> Self {
        let blanket::params::ParamError::OutOfRange {
            field,
            allowed,
            value,
        } = e;
        Self::OutOfRange {
            field: field.to_string(),
            allowed: allowed.to_string(),
            value,
        }
    }
}

impl From<sqlx::Error> for Rejection {
    fn from(e: sqlx::Error) -> Self {
        Self::Storage(e.to_string())
    }
}

/// The detail of every `503 storage` answer (the cause is logged on the server's stderr).
pub const STORAGE_DETAIL: &str =
    "the service's storage failed; try again later (the cause is in the server's log)";

/// Seconds a client is asked to wait after a `503 storage` (`Retry-After`).
pub const STORAGE_RETRY_AFTER: &str = "5";

/// An RFC 9457 problem details object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    /// A URI naming the problem type (`urn:blanket:problem:REASON`).
    #[serde(rename = "type")]
    pub problem_type: String,
    /// The HTTP reason phrase of the status.
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What happened, for a person.
    pub detail: String,
    /// The typed reason (extension member): the same as the type's last segment.
    pub reason: String,
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        let status = self.status();
        if let Self::Storage(cause) = &self {
            // For the operator only; the caller gets STORAGE_DETAIL.
            eprintln!("blanket: storage error answered 503: {cause}");
        }
        let body = serde_json::to_vec(&self.problem()).unwrap_or_default();
        let mut resp = (status, [(header::CONTENT_TYPE, PROBLEM_JSON)], body).into_response();
        // RFC 9110, Section 11.6.1: a 401 names the scheme to use.
        let realm = match self {
            Self::AdminUnauthorized(_) => Some("Bearer realm=\"blanket-admin\""),
            Self::Unauthorized => Some("Bearer realm=\"blanket-peer\""),
            _ => None,
        };
        if matches!(self, Self::Storage(_) | Self::Overloaded(_)) {
            resp.headers_mut().insert(
                header::RETRY_AFTER,
                header::HeaderValue::from_static(STORAGE_RETRY_AFTER),
            );
        }
        if let Some(realm) = realm {
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static(realm),
            );
        }
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_reasons_are_4xx_and_named() {
        let cases = [
            Rejection::UnknownTask("ab".into()),
            Rejection::Malformed {
                what: "report",
                detail: "x".into(),
            },
            Rejection::WrongLength {
                field: "report",
                expected: 87,
                got: 3,
            },
            Rejection::Duplicate("report"),
            Rejection::TaskClosed("ab".into()),
            Rejection::TooLarge { limit: 10 },
            Rejection::OutOfRange {
                field: "eps".into(),
                allowed: "> 0".into(),
                value: "-1".into(),
            },
        ];
        let codes: Vec<u16> = cases.iter().map(|r| r.status().as_u16()).collect();
        assert_eq!(codes, [404, 400, 400, 409, 410, 413, 422]);
        let p = cases[3].problem();
        assert_eq!(p.problem_type, "urn:blanket:problem:duplicate");
        assert_eq!(p.status, 409);
        assert_eq!(p.reason, "duplicate");
    }

    #[test]
    fn storage_errors_are_not_echoed_to_callers() {
        let secret = "error returned from database: unable to open /var/lib/blanket/analyzer.db";
        let r = Rejection::Storage(secret.into());
        let p = r.problem();
        assert_eq!((p.status, p.reason.as_str()), (503, "storage"));
        assert_eq!(p.detail, STORAGE_DETAIL);
        let resp = r.into_response();
        assert_eq!(resp.headers().get(header::RETRY_AFTER).unwrap(), "5");
    }

    #[test]
    fn admin_refusals_are_401_with_typed_reasons() {
        let m = Rejection::AdminUnauthorized(AdminAuth::Missing);
        let w = Rejection::AdminUnauthorized(AdminAuth::Wrong);
        assert_eq!(
            (m.status().as_u16(), m.reason()),
            (401, "admin-token-missing")
        );
        assert_eq!(
            (w.status().as_u16(), w.reason()),
            (401, "admin-token-wrong")
        );
        let resp = m.into_response();
        assert_eq!(
            resp.headers().get(header::WWW_AUTHENTICATE).unwrap(),
            "Bearer realm=\"blanket-admin\""
        );
    }
}
