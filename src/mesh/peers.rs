//! The host file (`--peers`) and the connections between processes, made within a deadline.
//!
//! The connections follow timely's own protocol (`timely_communication::networking`): process
//! `i` connects to every process `j < i` and sends its number as a big-endian `u64`; it accepts
//! a connection from every `j > i` on its own address. Timely's loop retries forever and prints
//! to stdout; this one gives up at `--connect-timeout` naming the peer, and prints nothing.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::{Duration, Instant};

use super::{MeshConfig, MeshError};

/// How often an unanswered connection is tried again.
const RETRY: Duration = Duration::from_millis(100);

/// Reads `path`: one `HOST:PORT` per line, blank lines and `#` comments skipped. Errors name the
/// line.
pub fn read_peers(path: &Path) -> Result<Vec<String>, MeshError> {
    let text = std::fs::read_to_string(path).map_err(|cause| MeshError::PeersFile {
        path: path.to_path_buf(),
        cause,
    })?;
    let mut peers = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |reason: String| MeshError::PeersLine {
            path: path.to_path_buf(),
            line: i + 1,
            reason,
        };
        let Some((host, port)) = line.rsplit_once(':') else {
            return Err(bad(format!("`{line}`: expected HOST:PORT")));
        };
        if host.is_empty() || port.parse::<u16>().is_err() {
            return Err(bad(format!(
                "`{line}`: expected HOST:PORT with a port in 1..=65535"
            )));
        }
        if peers.contains(&line.to_string()) {
            return Err(bad(format!("`{line}` is listed twice")));
        }
        peers.push(line.to_string());
    }
    Ok(peers)
}

/// Connects this process to every other of `config.peers` within `config.connect_timeout`: one
/// stream per process in process order, `None` at this process's own place (what
/// `initialize_networking_from_sockets` expects).
pub fn connect(config: &MeshConfig) -> Result<Vec<Option<TcpStream>>, MeshError> {
    let deadline = Instant::now() + config.connect_timeout;
    let me = config.process;
    let own = &config.peers[me];
    let listener = TcpListener::bind(own).map_err(|cause| MeshError::Listen {
        process: me,
        address: own.clone(),
        cause,
    })?;
    let mut streams: Vec<Option<TcpStream>> = Vec::with_capacity(config.processes);
    for (peer, address) in config.peers.iter().enumerate().take(me) {
        let mut stream = connect_until(peer, address, deadline, config)?;
        let io = |cause| MeshError::Connection {
            peer,
            address: address.clone(),
            cause,
        };
        stream.set_nodelay(true).map_err(io)?;
        stream.write_all(&(me as u64).to_be_bytes()).map_err(io)?;
        streams.push(Some(stream));
    }
    streams.push(None);
    streams.extend((me + 1..config.processes).map(|_| None));
    accept_until(&listener, &mut streams, deadline, config)?;
    Ok(streams)
}

fn connect_until(
    peer: usize,
    address: &str,
    deadline: Instant,
    config: &MeshConfig,
) -> Result<TcpStream, MeshError> {
    loop {
        let last = match address.to_socket_addrs().map(|mut a| a.next()) {
            Ok(Some(socket)) => {
                match TcpStream::connect_timeout(&socket, Duration::from_millis(500)) {
                    Ok(stream) => return Ok(stream),
                    Err(e) => e.to_string(),
                }
            }
            Ok(None) => "the name resolves to no address".to_string(),
            Err(e) => e.to_string(),
        };
        if Instant::now() >= deadline {
            return Err(MeshError::Unreachable {
                peer,
                address: address.to_string(),
                seconds: config.connect_timeout.as_secs(),
                cause: last,
            });
        }
        std::thread::sleep(RETRY);
    }
}

fn accept_until(
    listener: &TcpListener,
    streams: &mut [Option<TcpStream>],
    deadline: Instant,
    config: &MeshConfig,
) -> Result<(), MeshError> {
    let me = config.process;
    let listen_error = |cause| MeshError::Listen {
        process: me,
        address: config.peers[me].clone(),
        cause,
    };
    listener.set_nonblocking(true).map_err(listen_error)?;
    while let Some(missing) = (me + 1..config.processes).find(|&p| streams[p].is_none()) {
        match listener.accept() {
            Ok((mut stream, _)) => {
                stream.set_nonblocking(false).map_err(listen_error)?;
                stream
                    .set_read_timeout(Some(
                        deadline
                            .saturating_duration_since(Instant::now())
                            .max(RETRY),
                    ))
                    .map_err(listen_error)?;
                let mut number = [0u8; 8];
                stream.read_exact(&mut number).map_err(listen_error)?;
                stream.set_read_timeout(None).map_err(listen_error)?;
                stream.set_nodelay(true).map_err(listen_error)?;
                let announced = u64::from_be_bytes(number);
                let peer = usize::try_from(announced)
                    .ok()
                    .filter(|&p| p > me && p < config.processes)
                    .ok_or(MeshError::Stranger {
                        announced,
                        processes: config.processes,
                    })?;
                streams[peer] = Some(stream);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(MeshError::NotConnected {
                        peer: missing,
                        address: config.peers[missing].clone(),
                        seconds: config.connect_timeout.as_secs(),
                    });
                }
                std::thread::sleep(RETRY / 4);
            }
            Err(e) => return Err(listen_error(e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn a_host_file_is_read_line_by_line_and_errors_name_the_line() {
        let f = file("# the mesh\n127.0.0.1:7001\n\n127.0.0.1:7002  # second\n");
        assert_eq!(
            read_peers(f.path()).unwrap(),
            ["127.0.0.1:7001", "127.0.0.1:7002"]
        );
        let f = file("127.0.0.1:7001\nlocalhost\n");
        let e = read_peers(f.path()).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("HOST:PORT"), "{e}");
        let f = file("a:1\na:99999\n");
        assert!(read_peers(f.path())
            .unwrap_err()
            .to_string()
            .contains("line 2"));
        let f = file("a:1\na:1\n");
        assert!(read_peers(f.path())
            .unwrap_err()
            .to_string()
            .contains("twice"));
    }

    #[test]
    fn an_absent_peer_is_named_within_the_timeout() {
        // Two free ports: this process is number 1, process 0 never starts.
        let free = || {
            TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .to_string()
        };
        let config = MeshConfig {
            workers: 1,
            processes: 2,
            process: 1,
            peers: vec![free(), free()],
            connect_timeout: Duration::from_millis(600),
        };
        let started = Instant::now();
        let e = connect(&config).unwrap_err();
        assert!(matches!(e, MeshError::Unreachable { peer: 0, .. }), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5));
        // Process 0 waits for process 1, which never connects.
        let config = MeshConfig {
            process: 0,
            ..config
        };
        let e = connect(&config).unwrap_err();
        assert!(matches!(e, MeshError::NotConnected { peer: 1, .. }), "{e}");
    }
}
