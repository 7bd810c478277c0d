//! The one error type of the HTTP API: every failure a request can reach becomes a JSON body
//! `{"error": {"code": "...", "message": "..."}}` with a 4xx status for the caller's mistakes
//! and a 5xx status only for the server's own.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// An API failure. Handlers return `Result<_, ApiError>`; nothing in a handler panics.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A parameter is missing, malformed or out of its documented range (400).
    #[error("{0}")]
    BadParameter(String),
    /// No such run, sweep or route (404).
    #[error("{0}")]
    NotFound(String),
    /// The request is valid but the server's state does not allow it now (409), e.g. a run
    /// without any workload, or cancelling a finished run.
    #[error("{0}")]
    Conflict(String),
    /// The work did not finish within the request timeout (503, retry later).
    #[error("{0}")]
    Timeout(String),
    /// A failure inside the server (500): index errors, a worker that died.
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadParameter(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Timeout(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The stable machine-readable code clients switch on.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadParameter(_) => "bad_parameter",
            ApiError::NotFound(_) => "not_found",
            ApiError::Conflict(_) => "conflict",
            ApiError::Timeout(_) => "timeout",
            ApiError::Internal(_) => "internal",
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({
            "error": { "code": self.code(), "message": self.to_string() }
        });
        (self.status(), Json(body)).into_response()
    }
}

impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(r: axum::extract::rejection::QueryRejection) -> Self {
        ApiError::BadParameter(r.body_text())
    }
}

impl From<axum::extract::rejection::JsonRejection> for ApiError {
    fn from(r: axum::extract::rejection::JsonRejection) -> Self {
        ApiError::BadParameter(r.body_text())
    }
}

impl From<axum::extract::rejection::PathRejection> for ApiError {
    fn from(r: axum::extract::rejection::PathRejection) -> Self {
        ApiError::BadParameter(r.body_text())
    }
}

impl From<crate::index::IndexError> for ApiError {
    fn from(e: crate::index::IndexError) -> Self {
        ApiError::Internal(e.to_string())
    }
}
