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
    /// The run queue is full (429 with `Retry-After`).
    #[error("{0}")]
    TooManyRequests(String),
    /// The search pool and its queue are full (503 with `Retry-After`).
    #[error("{0}")]
    Overloaded(String),
    /// The request body is larger than the server accepts (413).
    #[error("{0}")]
    TooLarge(String),
    /// A state-changing request whose body is not JSON (415).
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// A cross-site or wrong-host request (403).
    #[error("{0}")]
    Forbidden(String),
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadParameter(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Timeout(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Overloaded(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
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
            ApiError::TooManyRequests(_) => "too_many_requests",
            ApiError::Overloaded(_) => "overloaded",
            ApiError::TooLarge(_) => "payload_too_large",
            ApiError::UnsupportedMediaType(_) => "unsupported_media_type",
            ApiError::Forbidden(_) => "forbidden",
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({
            "error": { "code": self.code(), "message": self.to_string() }
        });
        let retry = matches!(
            self,
            ApiError::TooManyRequests(_) | ApiError::Overloaded(_) | ApiError::Timeout(_)
        );
        let mut response = (self.status(), Json(body)).into_response();
        if retry {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static("1"),
            );
        }
        response
    }
}

impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(r: axum::extract::rejection::QueryRejection) -> Self {
        ApiError::BadParameter(r.body_text())
    }
}

impl From<axum::extract::rejection::JsonRejection> for ApiError {
    fn from(r: axum::extract::rejection::JsonRejection) -> Self {
        use axum::extract::rejection::JsonRejection as J;
        match &r {
            J::BytesRejection(_) if r.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                ApiError::TooLarge(format!(
                    "the request body is larger than the {} bytes accepted",
                    super::MAX_BODY_BYTES
                ))
            }
            _ => ApiError::BadParameter(r.body_text()),
        }
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
