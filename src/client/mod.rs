//! The HTTP client side: a minimal HTTP/1 client over one kept-alive connection ([`http`]) and
//! the query-log replayer that drives a running server with it ([`replay`]). Kept apart from
//! [`crate::server`]: the server never calls it, and a replay may target any server.

pub mod http;
pub mod replay;
