//! "Does this node answer CQL?": one blocking TCP connection that sends a native
//! protocol v4 OPTIONS frame and expects a SUPPORTED reply. It does not log in, run
//! queries or keep connections; that is the driver's job in `casslab-core`.

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
/// (applied to the connect and to each read and write).
pub fn cql_answers(address: Ipv4Addr, port: u16, timeout: Duration) -> bool {
    probe(address, port, timeout).unwrap_or(false)
}

fn probe(address: Ipv4Addr, port: u16, timeout: Duration) -> std::io::Result<bool> {
    let mut stream = TcpStream::connect_timeout(&SocketAddr::from((address, port)), timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.set_nodelay(true)?;
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
        assert_eq!(
            options_frame(),
            [0x04, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00]
        );
    }

    #[test]
    fn reply_header_decoding() {
        assert_eq!(
            parse_reply_header(&[0x84, 0, 0, 0, 0x06, 0, 0, 0, 0x2a]),
            ReplyHeader::Supported { body_bytes: 42 }
        );
        assert_eq!(
            parse_reply_header(&[0x84, 0, 0, 0, 0x00, 0, 0, 1, 0]),
            ReplyHeader::Error { body_bytes: 256 }
        );
        assert_eq!(
            parse_reply_header(&[0x85, 0, 0, 0, 0x06, 0, 0, 0, 0]),
            ReplyHeader::Unexpected {
                version: 0x85,
                opcode: 0x06
            }
        );
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
            conn.write_all(&[0x84, 0, 0, 0, 0x06, 0, 0, 0, 2, 0, 0])
                .unwrap();
        });
        assert!(cql_answers(
            Ipv4Addr::LOCALHOST,
            port,
            Duration::from_secs(2)
        ));
        server.join().unwrap();
    }

    #[test]
    fn probe_of_silent_or_closed_port_is_false() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());
        // Accepted by the kernel but never answered: times out.
        assert!(!cql_answers(
            Ipv4Addr::LOCALHOST,
            port,
            Duration::from_millis(200)
        ));
        drop(listener);
        assert!(!cql_answers(
            Ipv4Addr::LOCALHOST,
            port,
            Duration::from_millis(200)
        ));
    }
}
