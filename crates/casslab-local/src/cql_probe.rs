//! "Does this node answer CQL?": one blocking TCP connection (TLS-wrapped for nodes that
//! only accept encrypted clients) that sends a native protocol v4 OPTIONS frame and
//! expects a SUPPORTED reply. It does not log in, verify certificates (it asks whether a
//! node is up, not who it is), run queries or keep connections; that is the driver's job in
//! `casslab-core`.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// Request frames of protocol v4 start with this version byte; responses set the top bit.
const PROTOCOL_V4_REQUEST: u8 = 0x04;
const PROTOCOL_V4_RESPONSE: u8 = 0x84;
const OPCODE_ERROR: u8 = 0x00;
const OPCODE_OPTIONS: u8 = 0x05;
const OPCODE_SUPPORTED: u8 = 0x06;
/// Replies are small; anything bigger than this is not a SUPPORTED frame.
const MAX_REPLY_BODY_BYTES: u32 = 64 * 1024;

/// The 9-byte OPTIONS request: version, flags 0, stream 0 (i16), opcode, body length 0 (i32).
pub fn options_frame() -> [u8; 9] {
    [PROTOCOL_V4_REQUEST, 0, 0, 0, OPCODE_OPTIONS, 0, 0, 0, 0]
}

/// What a 9-byte reply header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyHeader {
    /// A SUPPORTED reply with a body of this many bytes.
    Supported { body_bytes: u32 },
    /// An ERROR reply (the node is up but refused the frame).
    Error { body_bytes: u32 },
    /// Not a v4 response to OPTIONS.
    Unexpected { version: u8, opcode: u8 },
}

/// Decodes a reply header.
pub fn parse_reply_header(header: &[u8; 9]) -> ReplyHeader {
    let body_bytes = u32::from_be_bytes([header[5], header[6], header[7], header[8]]);
    match (header[0], header[4]) {
        (PROTOCOL_V4_RESPONSE, OPCODE_SUPPORTED) => ReplyHeader::Supported { body_bytes },
        (PROTOCOL_V4_RESPONSE, OPCODE_ERROR) => ReplyHeader::Error { body_bytes },
        (version, opcode) => ReplyHeader::Unexpected { version, opcode },
    }
}

/// True when `address:port` answers an OPTIONS frame with SUPPORTED within `timeout`
/// (applied to the connect and to each read and write); with `tls`, over a TLS session
/// (a node that requires TLS closes plain connections, and a plain node fails the handshake).
pub fn cql_answers(address: Ipv4Addr, port: u16, tls: bool, timeout: Duration) -> bool {
    probe(address, port, tls, timeout).unwrap_or(false)
}

fn probe(address: Ipv4Addr, port: u16, tls: bool, timeout: Duration) -> std::io::Result<bool> {
    let stream = TcpStream::connect_timeout(&SocketAddr::from((address, port)), timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.set_nodelay(true)?;
    if !tls {
        return exchange(stream);
    }
    use openssl::ssl::{SslConnector, SslMethod, SslVerifyMode};
    let mut connector = SslConnector::builder(SslMethod::tls()).map_err(std::io::Error::other)?;
    connector.set_verify(SslVerifyMode::NONE);
    let session = connector
        .build()
        .configure()
        .map_err(std::io::Error::other)?
        .use_server_name_indication(false)
        .verify_hostname(false)
        .connect("", stream)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    exchange(session)
}

/// Sends OPTIONS on an open stream and reads the reply.
fn exchange(mut stream: impl Read + Write) -> std::io::Result<bool> {
    stream.write_all(&options_frame())?;
    let mut header = [0u8; 9];
    stream.read_exact(&mut header)?;
    match parse_reply_header(&header) {
        ReplyHeader::Supported { body_bytes } if body_bytes <= MAX_REPLY_BODY_BYTES => {
            let mut body = vec![0u8; body_bytes as usize];
            stream.read_exact(&mut body)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn options_frame_bytes() {
        assert_eq!(options_frame(), [0x04, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00]);
    }

    #[test]
    fn reply_header_decoding() {
        assert_eq!(parse_reply_header(&[0x84, 0, 0, 0, 0x06, 0, 0, 0, 0x2a]), ReplyHeader::Supported { body_bytes: 42 });
        assert_eq!(parse_reply_header(&[0x84, 0, 0, 0, 0x00, 0, 0, 1, 0]), ReplyHeader::Error { body_bytes: 256 });
        assert_eq!(parse_reply_header(&[0x85, 0, 0, 0, 0x06, 0, 0, 0, 0]), ReplyHeader::Unexpected { version: 0x85, opcode: 0x06 });
    }

    /// A fake server on a random loopback port that answers OPTIONS like Cassandra.
    #[test]
    fn probe_against_fake_server() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut req = [0u8; 9];
            conn.read_exact(&mut req).unwrap();
            assert_eq!(req, options_frame());
            // SUPPORTED with a body: a string multimap with 0 entries (2 bytes).
            conn.write_all(&[0x84, 0, 0, 0, 0x06, 0, 0, 0, 2, 0, 0]).unwrap();
        });
        assert!(cql_answers(Ipv4Addr::LOCALHOST, port, false, Duration::from_secs(2)));
        server.join().unwrap();
    }

    /// A self-signed TLS acceptor for a fake node.
    fn tls_acceptor() -> openssl::ssl::SslAcceptor {
        use openssl::{asn1::Asn1Time, hash::MessageDigest, pkey::PKey, rsa::Rsa, x509};
        let key = PKey::from_rsa(Rsa::generate(2048).unwrap()).unwrap();
        let mut name = x509::X509NameBuilder::new().unwrap();
        name.append_entry_by_text("CN", "fake-node").unwrap();
        let name = name.build();
        let mut cert = x509::X509Builder::new().unwrap();
        cert.set_version(2).unwrap();
        cert.set_subject_name(&name).unwrap();
        cert.set_issuer_name(&name).unwrap();
        cert.set_pubkey(&key).unwrap();
        cert.set_not_before(&Asn1Time::days_from_now(0).unwrap()).unwrap();
        cert.set_not_after(&Asn1Time::days_from_now(1).unwrap()).unwrap();
        cert.sign(&key, MessageDigest::sha256()).unwrap();
        let mut acceptor = openssl::ssl::SslAcceptor::mozilla_intermediate_v5(openssl::ssl::SslMethod::tls()).unwrap();
        acceptor.set_private_key(&key).unwrap();
        acceptor.set_certificate(&cert.build()).unwrap();
        acceptor.build()
    }

    /// A fake node that only speaks TLS: the TLS probe gets SUPPORTED, a plain one does not.
    #[test]
    fn tls_probe_against_fake_tls_server() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let acceptor = tls_acceptor();
        let server = std::thread::spawn(move || {
            // first a plain probe: the handshake fails and the connection is dropped
            let (conn, _) = listener.accept().unwrap();
            assert!(acceptor.accept(conn).is_err());
            let (conn, _) = listener.accept().unwrap();
            let mut conn = acceptor.accept(conn).unwrap();
            let mut req = [0u8; 9];
            conn.read_exact(&mut req).unwrap();
            assert_eq!(req, options_frame());
            conn.write_all(&[0x84, 0, 0, 0, 0x06, 0, 0, 0, 2, 0, 0]).unwrap();
        });
        let timeout = Duration::from_secs(5);
        assert!(!cql_answers(Ipv4Addr::LOCALHOST, port, false, timeout));
        assert!(cql_answers(Ipv4Addr::LOCALHOST, port, true, timeout));
        server.join().unwrap();
    }

    #[test]
    fn probe_of_silent_or_closed_port_is_false() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());
        // Accepted by the kernel but never answered: times out.
        assert!(!cql_answers(Ipv4Addr::LOCALHOST, port, false, Duration::from_millis(200)));
        drop(listener);
        assert!(!cql_answers(Ipv4Addr::LOCALHOST, port, false, Duration::from_millis(200)));
    }
}
