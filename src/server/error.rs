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

/// A deserialisation message in the API's words, not Rust's: serde names the Rust type it
/// expected (`expected u64`, `expected struct RunSpec`), which means nothing to a client
/// writing JSON; axum prefixes its own extractor wording.
pub fn readable_rejection(message: &str) -> String {
    let message = message
        .replace(
            "Failed to deserialize the JSON body into the target type: ",
            "invalid request body: ",
        )
        .replace(
            "Failed to parse the request body as JSON: ",
            "the request body is not JSON: ",
        )
        .replace(
            "Failed to deserialize query string: ",
            "invalid query parameter: ",
        )
        .replace("Invalid URL: ", "invalid path parameter: ");
    let mut out = String::with_capacity(message.len());
    let mut rest = message.as_str();
    while let Some(at) = rest.find("expected ") {
        let (before, after) = rest.split_at(at + "expected ".len());
        out.push_str(before);
        let word_end = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let word = &after[..word_end];
        let (replacement, consumed) = match word {
            "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => ("a non-negative integer", word_end),
            "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => ("an integer", word_end),
            "f32" | "f64" => ("a number", word_end),
            "unit" => ("null", word_end),
            "struct" | "enum" | "tuple" => {
                // Skip the Rust type name that follows.
                let name = &after[word_end..];
                let name_len = name
                    .trim_start_matches(' ')
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(name.trim_start_matches(' ').len());
                let skipped =
                    word_end + (name.len() - name.trim_start_matches(' ').len()) + name_len;
                let what = if word == "struct" {
                    "a JSON object"
                } else if word == "enum" {
                    "one of the documented values"
                } else {
                    "a JSON array"
                };
                (what, skipped)
            }
            _ => ("", 0),
        };
        match after.strip_prefix("a sequence") {
            Some(_) if consumed == 0 => {
                out.push_str("a JSON array");
                rest = &after["a sequence".len()..];
                continue;
            }
            _ => {}
        }
        match after.strip_prefix("a map") {
            Some(_) if consumed == 0 => {
                out.push_str("a JSON object");
                rest = &after["a map".len()..];
                continue;
            }
            _ => {}
        }
        out.push_str(replacement);
        rest = &after[consumed..];
    }
    out.push_str(rest);
    out
}

impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(r: axum::extract::rejection::QueryRejection) -> Self {
        ApiError::BadParameter(readable_rejection(&r.body_text()))
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
            _ => ApiError::BadParameter(readable_rejection(&r.body_text())),
        }
    }
}

impl From<axum::extract::rejection::PathRejection> for ApiError {
    fn from(r: axum::extract::rejection::PathRejection) -> Self {
        ApiError::BadParameter(readable_rejection(&r.body_text()))
    }
}

impl From<crate::index::IndexError> for ApiError {
    fn from(e: crate::index::IndexError) -> Self {
        ApiError::Internal(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::readable_rejection;

    #[test]
    fn serde_messages_lose_rust_type_names() {
        assert_eq!(
            readable_rejection("Failed to deserialize the JSON body into the target type: budget: invalid type: string \"x\", expected u64 at line 1 column 14"),
            "invalid request body: budget: invalid type: string \"x\", expected a non-negative integer at line 1 column 14"
        );
        assert_eq!(
            readable_rejection("Failed to deserialize the JSON body into the target type: invalid type: sequence, expected struct RunSpec at line 1 column 1"),
            "invalid request body: invalid type: sequence, expected a JSON object at line 1 column 1"
        );
        assert_eq!(
            readable_rejection(
                "Failed to deserialize query string: k: invalid digit found in string"
            ),
            "invalid query parameter: k: invalid digit found in string"
        );
        assert_eq!(
            readable_rejection("x: invalid type: map, expected a sequence; y: expected f64, expected i32"),
            "x: invalid type: map, expected a JSON array; y: expected a number, expected an integer"
        );
        assert_eq!(
            readable_rejection("unknown variant `z`, expected one of `a`, `b`"),
            "unknown variant `z`, expected one of `a`, `b`"
        );
    }
}
