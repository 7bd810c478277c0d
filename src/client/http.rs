//! A minimal HTTP/1.1 client over one kept-alive connection: what `replay` needs (one
//! connection per simulated client, loopback, no TLS) and what the WebDriver calls of the
//! browser tests need. Built on hyper's connection API, already in the tree through axum.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;

/// Errors of [`HttpClient`].
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("bad server URL `{0}`: {1}")]
    Url(String, String),
    #[error("connecting to {0}: {1}")]
    Connect(String, std::io::Error),
    #[error("HTTP: {0}")]
    Http(#[from] hyper::Error),
    #[error("building the request: {0}")]
    Request(#[from] hyper::http::Error),
    #[error("no complete response within {0:?}")]
    Timeout(std::time::Duration),
    #[error("response body larger than {0} bytes")]
    BodyTooLarge(usize),
}

impl ClientError {
    /// A short label for summaries: `timeout`, `body-too-large`, `connect`, `http`, ...
    pub fn kind(&self) -> &'static str {
        match self {
            ClientError::Url(..) => "url",
            ClientError::Connect(..) => "connect",
            ClientError::Http(_) => "http-error",
            ClientError::Request(_) => "request",
            ClientError::Timeout(_) => "timeout",
            ClientError::BodyTooLarge(_) => "body-too-large",
        }
    }
}

/// One connection to one server, reopened after a failure.
pub struct HttpClient {
    authority: String,
    /// Path prefix of the base URL (without a trailing slash).
    base_path: String,
    sender: Option<SendRequest<Full<Bytes>>>,
    /// Longest one exchange (connect, send, read the whole body) may take.
    timeout: Option<std::time::Duration>,
    /// Largest response body read.
    max_body: Option<usize>,
}

impl HttpClient {
    /// `base`: `http://host:port[/prefix]`.
    pub fn new(base: &str) -> Result<Self, ClientError> {
        let url =
            url::Url::parse(base).map_err(|e| ClientError::Url(base.into(), e.to_string()))?;
        if url.scheme() != "http" {
            return Err(ClientError::Url(
                base.into(),
                "only plain http:// is supported".into(),
            ));
        }
        let host = url
            .host_str()
            .ok_or_else(|| ClientError::Url(base.into(), "no host".into()))?;
        let port = url.port_or_known_default().unwrap_or(80);
        Ok(HttpClient {
            authority: format!("{host}:{port}"),
            base_path: url.path().trim_end_matches('/').to_string(),
            sender: None,
            timeout: None,
            max_body: None,
        })
    }

    /// Fails an exchange that takes longer than `timeout` (the connection is dropped).
    pub fn with_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Fails a response whose body exceeds `bytes` without buffering more of it.
    pub fn with_max_body(mut self, bytes: usize) -> Self {
        self.max_body = Some(bytes);
        self
    }

    async fn connection(&mut self) -> Result<&mut SendRequest<Full<Bytes>>, ClientError> {
        if self.sender.as_ref().is_none_or(|s| s.is_closed()) {
            let stream = tokio::net::TcpStream::connect(&self.authority)
                .await
                .map_err(|e| ClientError::Connect(self.authority.clone(), e))?;
            stream.set_nodelay(true).ok();
            let (sender, conn) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            self.sender = Some(sender);
        }
        Ok(self.sender.as_mut().expect("just connected"))
    }

    /// Sends one request; `path_and_query` is appended to the base URL's path.
    pub async fn send(
        &mut self,
        method: Method,
        path_and_query: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<(StatusCode, Bytes), ClientError> {
        let result = match self.timeout {
            None => self.exchange(method, path_and_query, body).await,
            Some(t) => tokio::time::timeout(t, self.exchange(method, path_and_query, body))
                .await
                .unwrap_or(Err(ClientError::Timeout(t))),
        };
        if result.is_err() {
            // The connection may be mid-response: never reuse it.
            self.sender = None;
        }
        result
    }

    async fn exchange(
        &mut self,
        method: Method,
        path_and_query: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<(StatusCode, Bytes), ClientError> {
        let uri = format!("{}{}", self.base_path, path_and_query);
        let mut builder = Request::builder()
            .method(method)
            .uri(uri)
            .header(hyper::header::HOST, self.authority.clone());
        let bytes = match body {
            Some(v) => {
                builder = builder.header(hyper::header::CONTENT_TYPE, "application/json");
                Bytes::from(serde_json::to_vec(v).unwrap_or_default())
            }
            None => Bytes::new(),
        };
        let request = builder.body(Full::new(bytes))?;
        let sender = self.connection().await?;
        sender.ready().await?;
        let result = sender.send_request(request).await;
        let response = match result {
            Ok(r) => r,
            Err(e) => {
                self.sender = None;
                return Err(e.into());
            }
        };
        let status = response.status();
        let body = match self.max_body {
            None => response.into_body().collect().await?.to_bytes(),
            Some(max) => http_body_util::Limited::new(response.into_body(), max)
                .collect()
                .await
                .map_err(|e| match e.downcast::<hyper::Error>() {
                    Ok(h) => ClientError::Http(*h),
                    Err(_) => ClientError::BodyTooLarge(max),
                })?
                .to_bytes(),
        };
        Ok((status, body))
    }

    pub async fn get(&mut self, path_and_query: &str) -> Result<(StatusCode, Bytes), ClientError> {
        self.send(Method::GET, path_and_query, None).await
    }

    /// GET, expecting JSON.
    pub async fn get_json(
        &mut self,
        path_and_query: &str,
    ) -> Result<(StatusCode, serde_json::Value), ClientError> {
        let (s, b) = self.get(path_and_query).await?;
        Ok((
            s,
            serde_json::from_slice(&b).unwrap_or(serde_json::Value::Null),
        ))
    }

    /// POST (or another method) with a JSON body, expecting JSON.
    pub async fn send_json(
        &mut self,
        method: Method,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<(StatusCode, serde_json::Value), ClientError> {
        let (s, b) = self.send(method, path, Some(body)).await?;
        Ok((
            s,
            serde_json::from_slice(&b).unwrap_or(serde_json::Value::Null),
        ))
    }
}

/// `application/x-www-form-urlencoded` encoding of a query parameter value.
pub fn encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}
