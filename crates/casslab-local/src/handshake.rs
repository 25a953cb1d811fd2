//! Who dials: the first bytes of a Cassandra internode connection. Every node connects from
//! 127.0.0.1 on loopback (Cassandra 4 and 5 do not bind their outbound sockets), so the relay
//! cannot tell the dialer by its address; but every internode connection — messaging, gossip,
//! streaming — opens with the handshake's `Initiate` message, which names the dialer's
//! broadcast address: the protocol magic (4 bytes, 0xCA552DFA), the flags (4 bytes), then the
//! address as Cassandra serializes an `InetAddressAndPort` (a length byte: 4, or 6 with the
//! port from messaging version 12 on; the address's bytes; the port). Reading it takes no more
//! than those first bytes, which the relay forwards unchanged.

use std::io::Read;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

/// `Message.PROTOCOL_MAGIC` of Cassandra's internode messaging.
const PROTOCOL_MAGIC: [u8; 4] = 0xCA55_2DFAu32.to_be_bytes();

/// Bytes that hold the dialer's IPv4 address: magic, flags, length, address.
pub const GREETING_BYTES: usize = 13;

/// The dialer's broadcast address, when `first` (the first bytes of an internode connection)
/// is a handshake that names an IPv4 one.
pub fn dialer(first: &[u8]) -> Option<Ipv4Addr> {
    if first.len() < GREETING_BYTES || first[..4] != PROTOCOL_MAGIC {
        return None;
    }
    match first[8] {
        4 | 6 => Some(Ipv4Addr::new(first[9], first[10], first[11], first[12])),
        _ => None,
    }
}

/// Reads from `stream` (blocking, with its own deadline) until it has [`GREETING_BYTES`] or the
/// dialer stops sending; returns what it read (to be forwarded as it is).
pub fn read_greeting(stream: &mut std::net::TcpStream, within: Duration) -> Vec<u8> {
    let deadline = Instant::now() + within;
    let mut got = Vec::with_capacity(64);
    let mut buf = [0u8; 64];
    while got.len() < GREETING_BYTES {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    let _ = stream.set_read_timeout(None);
    got
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialer_is_read_from_the_initiate_message() {
        // magic, flags, then 127.64.0.122:7000 as messaging version 12+ writes it
        let mut hello = vec![0xCA, 0x55, 0x2D, 0xFA, 0, 0, 0x0d, 0x0c, 6, 127, 64, 0, 122, 0x1b, 0x58];
        assert_eq!(dialer(&hello), Some(Ipv4Addr::new(127, 64, 0, 122)));
        hello[8] = 4;
        assert_eq!(dialer(&hello), Some(Ipv4Addr::new(127, 64, 0, 122)), "the form without the port");
        hello[8] = 18;
        assert_eq!(dialer(&hello), None, "IPv6 is not ours");
        assert_eq!(dialer(&hello[..12]), None, "too short");
        assert_eq!(dialer(b"GET / HTTP/1.1\r\n"), None, "not Cassandra");
    }

    #[test]
    fn the_greeting_is_read_whole_or_until_the_dialer_stops() {
        use std::io::Write;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let sender = std::thread::spawn(move || {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.write_all(&[0xCA, 0x55, 0x2D]).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            s.write_all(&[0xFA, 0, 0, 0, 0, 6, 127, 0, 0, 9, 0, 1, 2]).unwrap();
            std::thread::sleep(Duration::from_millis(300));
        });
        let (mut s, _) = l.accept().unwrap();
        let got = read_greeting(&mut s, Duration::from_secs(5));
        assert_eq!(dialer(&got), Some(Ipv4Addr::new(127, 0, 0, 9)));
        sender.join().unwrap();
        // a dialer that says nothing is given up on at the deadline
        let _quiet = std::net::TcpStream::connect(addr).unwrap();
        let (mut s, _) = l.accept().unwrap();
        let started = Instant::now();
        assert!(read_greeting(&mut s, Duration::from_millis(100)).is_empty());
        assert!(started.elapsed() >= Duration::from_millis(100));
    }
}
