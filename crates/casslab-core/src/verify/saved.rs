//! A write record as it is saved after a run, so that a later run or a verification pass on the
//! same data set can go on from it: per table, every key written with its last write's number,
//! its floor, the kinds of the writes between and whether the floor is known (in flight at the
//! end counts as failed). Runs
//! of consecutive keys in one state, as varints, deflated: a record of 10 M keys written once
//! each takes a few bytes.

use super::record::{KeyState, WriteRecord};
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use flate2::Compression;
use std::io::{Read, Write};

/// Format of the saved bytes; bumped when it changes (3: whether each floor is known; 2, which
/// did not say, is still read).
const FORMAT: u8 = 3;

/// Encodes `record`'s settled keys, made under table model `model` (`model::Table::model`):
/// runs of consecutive keys in the same state, each as the distance from the last run's end,
/// its length and the state.
pub fn encode(record: &WriteRecord, model: u64) -> Vec<u8> {
    encode_keys(record, model, |_| true)
}

/// [`encode`] of the keys `keep` keeps (a shard's own).
pub fn encode_keys(record: &WriteRecord, model: u64, keep: impl Fn(u64) -> bool) -> Vec<u8> {
    let mut raw = vec![FORMAT];
    raw.extend_from_slice(&model.to_le_bytes());
    // (first key, keys, state) of the run being built; the end of the last one written
    let mut run: Option<(u64, u64, KeyState)> = None;
    let mut end = 0u64;
    let flush = |raw: &mut Vec<u8>, (first, len, s): (u64, u64, KeyState), end: &mut u64| {
        varint(raw, first - *end);
        varint(raw, len);
        varint(raw, s.issued as u64);
        varint(raw, (s.issued - s.floor.min(s.issued)) as u64);
        raw.push(u8::from(s.put) | u8::from(s.delete) << 1 | u8::from(!s.exact) << 2);
        *end = first + len;
    };
    for (key, s) in record.settled().filter(|(k, _)| keep(*k)) {
        match &mut run {
            Some((first, len, state)) if *first + *len == key && *state == s => *len += 1,
            _ => {
                if let Some(r) = run.take() {
                    flush(&mut raw, r, &mut end);
                }
                run = Some((key, 1, s));
            }
        }
    }
    if let Some(r) = run {
        flush(&mut raw, r, &mut end);
    }
    let mut e = DeflateEncoder::new(Vec::new(), Compression::default());
    e.write_all(&raw).expect("writing to a Vec cannot fail");
    e.finish().expect("writing to a Vec cannot fail")
}

/// Restores what [`encode`] saved into `record` of a table of model `model`; the keys restored,
/// or why the bytes cannot be gone on from.
pub fn decode_into(bytes: &[u8], record: &WriteRecord, model: u64) -> Result<u64, String> {
    let mut raw = Vec::new();
    DeflateDecoder::new(bytes).read_to_end(&mut raw).map_err(|e| format!("not a saved write record: {e}"))?;
    let (&format, mut rest) = raw.split_first().ok_or("an empty saved write record")?;
    if format != FORMAT && format != 2 {
        return Err(format!("a saved write record of format {format}, which this casslab does not read"));
    }
    let (saved_model, tail) = rest.split_at_checked(8).ok_or("a saved write record cut short")?;
    if u64::from_le_bytes(saved_model.try_into().expect("8 bytes")) != model {
        return Err("the run that wrote to it last wrote other columns or values (another workload)".into());
    }
    rest = tail;
    let (mut end, mut n) = (0u64, 0u64);
    while !rest.is_empty() {
        let first = end + read_varint(&mut rest)?;
        let len = read_varint(&mut rest)?;
        let issued = read_varint(&mut rest)? as u32;
        let gap = read_varint(&mut rest)? as u32;
        let (&flags, tail) = rest.split_first().ok_or("a saved write record cut short")?;
        rest = tail;
        end = first.checked_add(len).ok_or("a malformed saved write record")?;
        if end > record.capacity() {
            return Err(format!("a saved key ({}) beyond the keys the workload writes ({})", end - 1, record.capacity()));
        }
        let floor = issued - gap.min(issued);
        // format 2 saved an unknown floor as 0
        let exact = if format == 2 { floor > 0 } else { flags & 4 == 0 };
        let state = KeyState { issued, floor, pending: 0, put: flags & 1 != 0, delete: flags & 2 != 0, exact, recent: None };
        for key in first..end {
            record.restore(key, &state);
        }
        n += len;
    }
    Ok(n)
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(b: &mut &[u8]) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = b.split_first().ok_or("a saved write record cut short")?;
        *b = rest;
        v |= ((byte & 0x7F) as u64) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("a malformed number in a saved write record".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::record::{Order, WriteKind};

    #[test]
    fn a_record_round_trips_and_a_loaded_one_is_small() {
        let r = WriteRecord::new(2_000_000, Order::Arrival);
        for k in 0..1_000_000 {
            r.mark_loaded(k);
        }
        let w = |k: u64, kind: WriteKind, acked: bool| {
            let b = r.begin(k, kind).unwrap();
            r.finish(k, &b, acked);
        };
        w(7, WriteKind::Put, true);
        w(9, WriteKind::Delete, true);
        w(11, WriteKind::Put, false); // may still arrive: its floor is unknown from now on
        r.begin(1_500_000, WriteKind::Put); // in flight at the end
        let bytes = encode(&r, 7);
        assert!(bytes.len() < 100, "{} bytes for a million loaded keys", bytes.len());
        let back = WriteRecord::new(2_000_000, Order::Arrival);
        assert_eq!(decode_into(&bytes, &back, 7), Ok(1_000_001));
        for k in [0, 7, 9, 11, 999_999, 1_000_000, 1_500_000] {
            let s = r.state(k);
            let exact = s.exact && s.pending == 0;
            assert_eq!(back.state(k), KeyState { pending: 0, exact, ..s }, "key {k}");
        }
        assert!(!back.state(11).exact && !back.state(1_500_000).exact && back.state(9).exact);
        assert!(decode_into(&bytes, &WriteRecord::new(10, Order::Arrival), 7).unwrap_err().contains("beyond the keys"));
        assert!(decode_into(&bytes, &WriteRecord::new(2_000_000, Order::Arrival), 8).unwrap_err().contains("another workload"));
        assert!(decode_into(b"junk", &back, 7).is_err());
    }
}
