//! What one node thinks of the ring: the parsing of `nodetool status` output into one
//! [`RingEntry`] per node (data center, state such as `UN` or `DN`, load). Pure; running
//! nodetool is `cluster`'s job.

use std::net::Ipv4Addr;

/// One line of `nodetool status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingEntry {
    pub address: Ipv4Addr,
    pub dc: String,
    /// Status and state letters: `UN` (up, normal), `DN` (down), `UJ` (joining), `?N` (a peer
    /// the node has not heard of since it started), ...
    pub state: String,
    /// As nodetool prints it, e.g. `70.21 KiB`, or `?`.
    pub load: String,
}

impl RingEntry {
    /// Up and normal.
    pub fn is_up_normal(&self) -> bool {
        self.state == "UN"
    }
}

/// The nodes listed in `nodetool status` output, with the data center each is listed under.
pub fn parse_ring(output: &str) -> Vec<RingEntry> {
    let mut dc = String::new();
    let mut out = Vec::new();
    for line in output.lines() {
        if let Some(name) = line.strip_prefix("Datacenter:") {
            dc = name.trim().to_string();
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let [state, address, rest @ ..] = words.as_slice() else { continue };
        let letters: Vec<char> = state.chars().collect();
        let is_state = letters.len() == 2 && "UD?".contains(letters[0]) && "NLJM".contains(letters[1]);
        let Ok(address) = address.parse::<Ipv4Addr>() else { continue };
        if !is_state {
            continue;
        }
        let load = match rest {
            [value, unit, ..] if value.parse::<f64>().is_ok() && unit.ends_with('B') => format!("{value} {unit}"),
            [value, ..] => value.to_string(),
            [] => "?".to_string(),
        };
        out.push(RingEntry { address, dc: dc.clone(), state: state.to_string(), load });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Datacenter: dc1
===============
Status=Up/Down
|/ State=Normal/Leaving/Joining/Moving
--  Address     Load        Tokens  Owns (effective)  Host ID                               Rack
UN  127.0.0.71  104.37 KiB  16      65.2%             1c2b7a63-4bb5-4a5c-9b0c-4a6ff1b0f0d1  rack1
DN  127.0.0.72  ?           16      70.1%             0d3b7a63-4bb5-4a5c-9b0c-4a6ff1b0f0d2  rack1

Datacenter: dc2
===============
Status=Up/Down
|/ State=Normal/Leaving/Joining/Moving
--  Address     Load       Tokens  Owns (effective)  Host ID                               Rack
UJ  127.0.0.73  70.2 KiB   16      64.7%             2e3b7a63-4bb5-4a5c-9b0c-4a6ff1b0f0d3  rack1
?N  127.0.0.74  ?          16      0.0%              3f3b7a63-4bb5-4a5c-9b0c-4a6ff1b0f0d4  rack1
";

    #[test]
    fn nodes_states_and_loads_by_data_center() {
        let ring = parse_ring(STATUS);
        assert_eq!(ring.len(), 4);
        assert_eq!((ring[3].state.as_str(), ring[3].is_up_normal()), ("?N", false));
        assert_eq!(ring[0], RingEntry { address: Ipv4Addr::new(127, 0, 0, 71), dc: "dc1".into(), state: "UN".into(), load: "104.37 KiB".into() });
        assert_eq!((ring[1].state.as_str(), ring[1].load.as_str(), ring[1].dc.as_str()), ("DN", "?", "dc1"));
        assert_eq!((ring[2].state.as_str(), ring[2].dc.as_str()), ("UJ", "dc2"));
        assert!(ring[0].is_up_normal() && !ring[1].is_up_normal() && !ring[2].is_up_normal());
        assert!(parse_ring("error: connection refused").is_empty());
    }
}
