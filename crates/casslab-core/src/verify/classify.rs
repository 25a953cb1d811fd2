//! Classifying one read of one key: from what the write record said when the read was sent
//! and when it came back, and what the read found (no row, or a row whose columns were matched
//! to the writes that made them), the read is **ok**, **stale** (it shows no write at or above
//! the floor: an older write than the last one acknowledged before it was sent), **missing** (no
//! row where an acknowledged upsert exists), **corrupt** (a value that matches no write ever
//! made), **resurrected** (a row where the last acknowledged write was a delete), **expired**
//! (a row returned past its TTL and a tolerance) or **unchecked**: nothing is known of the key,
//! its floor is not known, or what came back cannot show which write it is (columns that not
//! every write writes, only key columns) — a read that could not be judged is never counted as
//! ok. Writes in flight while the read ran are possible answers, never violations; such reads
//! are counted as *unsettled* beside their class. Pure logic: no I/O, no values.

use super::record::KeyState;
pub use crate::stats::checked_reads::Class;

/// What a read found for one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// No row.
    Absent,
    /// A row. `newest`: the newest write one of its checked columns was matched to (`None`
    /// when no column could tell, e.g. only key columns were read); `corrupt`: a column matched
    /// no write ever made.
    Row { newest: Option<u32>, corrupt: bool },
    /// An answer that cannot say whether there is a row: one that could not be decoded, or
    /// no value in any field read where a row may lack them (Redis `HGET`).
    Undecided,
}

/// How a key's time-to-live bears on a read, when its writes expire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Expiry {
    /// No TTL, or not yet near it.
    #[default]
    Live,
    /// The writes a read may see have certainly expired (past the TTL and the tolerance): a row
    /// is `expired`, no row is right.
    Expired,
    /// Within the tolerance of the TTL: a row and no row are both right.
    Either,
    /// The writes expire, but when is not known (their times were not kept): no row cannot
    /// be judged.
    Unknown,
}

/// The settings a read is judged with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judged {
    /// Every recorded write to the table writes a column this read checks, so a row whose
    /// columns all predate the floor is stale (when not, a row it finds is unchecked unless a
    /// value is corrupt).
    pub stale_checkable: bool,
    /// The read names its row by every key column: no row is judged (missing or not).
    pub one_row: bool,
    /// Some recorded write to the table deletes rows.
    pub deletes: bool,
}

/// One read's class, and whether a write to its key was in flight while it ran (unsettled).
pub fn classify(at_send: &KeyState, at_end: &KeyState, found: Found, expiry: Expiry, judged: Judged) -> (Class, bool) {
    let unsettled = at_send.pending > 0 || at_end.issued > at_send.issued;
    if !at_send.known() {
        return (Class::Unchecked, unsettled);
    }
    if let Found::Row { corrupt: true, .. } = found {
        return (Class::Corrupt, unsettled);
    }
    if !at_send.exact || found == Found::Undecided {
        return (Class::Unchecked, unsettled);
    }
    // writes begun while the read ran may be what it saw: their kinds are the recent ones the
    // record keeps (under timestamp order), else the last one's is in the window at the end;
    // of two or more without recent kinds, a later acknowledgement may have dropped an earlier
    // one's kind from the window, so either kind the table writes is accepted
    let begun = at_end.issued.saturating_sub(at_send.issued);
    let (put_during, delete_during) = match at_end.recent_kinds(begun) {
        Some(kinds) => kinds,
        None if begun == 0 => (false, false),
        None if begun == 1 => (at_end.put, at_end.delete),
        None => (true, judged.deletes),
    };
    let put_possible = at_send.put || put_during;
    let delete_possible = at_send.delete || delete_during;
    let class = match found {
        Found::Row { corrupt: true, .. } => Class::Corrupt,
        Found::Undecided => Class::Unchecked,
        Found::Absent if !judged.one_row => Class::Ok,
        Found::Absent => {
            if at_send.floor == 0 || delete_possible || matches!(expiry, Expiry::Either | Expiry::Expired) {
                Class::Ok
            } else if expiry == Expiry::Unknown {
                Class::Unchecked
            } else {
                Class::Missing
            }
        }
        Found::Row { newest, .. } => {
            if expiry == Expiry::Expired && !unsettled {
                Class::Expired
            } else if !put_possible && at_send.floor > 0 {
                Class::Resurrected
            } else if newest.is_none() {
                // no column read shows a write: the row may be any of them
                Class::Unchecked
            } else if at_send.floor == 0 {
                Class::Ok
            } else if !judged.stale_checkable {
                // its columns do not show every write: an older row would look the same
                Class::Unchecked
            } else if newest.is_some_and(|w| w < at_send.floor) {
                if at_send.delete {
                    Class::Resurrected
                } else {
                    Class::Stale
                }
            } else {
                Class::Ok
            }
        }
    };
    (class, unsettled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ks(issued: u32, floor: u32, pending: u32, put: bool, delete: bool) -> KeyState {
        KeyState { issued, floor, pending, put, delete, exact: true, recent: None }
    }

    const ONE: Judged = Judged { stale_checkable: true, one_row: true, deletes: true };

    fn row(newest: u32) -> Found {
        Found::Row { newest: Some(newest), corrupt: false }
    }

    #[test]
    fn the_last_acknowledged_write_or_later_is_ok_and_older_is_stale() {
        let s = ks(5, 5, 0, true, false);
        assert_eq!(classify(&s, &s, row(5), Expiry::Live, ONE), (Class::Ok, false));
        assert_eq!(classify(&s, &s, row(4), Expiry::Live, ONE), (Class::Stale, false));
    }

    #[test]
    fn reads_that_cannot_tell_which_write_they_saw_are_unchecked_not_ok() {
        let s = ks(5, 5, 0, true, false);
        let partial = Judged { stale_checkable: false, ..ONE };
        assert_eq!(classify(&s, &s, row(4), Expiry::Live, partial), (Class::Unchecked, false), "not every write shows in the columns read");
        assert_eq!(classify(&s, &s, row(5), Expiry::Live, partial), (Class::Unchecked, false));
        let keys_only = Found::Row { newest: None, corrupt: false };
        assert_eq!(classify(&s, &s, keys_only, Expiry::Live, ONE), (Class::Unchecked, false), "only key columns read");
        assert_eq!(classify(&s, &s, Found::Row { newest: None, corrupt: true }, Expiry::Live, partial).0, Class::Corrupt, "what it can judge, it does");
        assert_eq!(classify(&s, &s, Found::Absent, Expiry::Live, partial).0, Class::Missing);
        let unknown = KeyState { exact: false, ..s };
        for found in [row(5), row(1), Found::Absent] {
            assert_eq!(classify(&unknown, &unknown, found, Expiry::Live, ONE).0, Class::Unchecked, "a floor not known: {found:?}");
        }
        assert_eq!(classify(&unknown, &unknown, Found::Row { newest: None, corrupt: true }, Expiry::Live, ONE).0, Class::Corrupt);
        assert_eq!(classify(&s, &s, Found::Undecided, Expiry::Live, ONE).0, Class::Unchecked, "an answer not decoded is no row of nothing");
    }

    #[test]
    fn writes_in_flight_are_possible_answers_counted_as_unsettled() {
        let sent = ks(6, 5, 1, true, false);
        assert_eq!(classify(&sent, &sent, row(6), Expiry::Live, ONE), (Class::Ok, true));
        assert_eq!(classify(&sent, &sent, row(5), Expiry::Live, ONE), (Class::Ok, true));
        assert_eq!(classify(&sent, &sent, row(4), Expiry::Live, ONE), (Class::Stale, true), "older than the floor even so");
        // a write begun during the read
        let (before, after) = (ks(5, 5, 0, true, false), ks(6, 5, 1, true, false));
        assert_eq!(classify(&before, &after, row(6), Expiry::Live, ONE), (Class::Ok, true));
    }

    #[test]
    fn no_row_is_missing_only_after_an_acknowledged_upsert() {
        let acked = ks(3, 3, 0, true, false);
        assert_eq!(classify(&acked, &acked, Found::Absent, Expiry::Live, ONE).0, Class::Missing);
        let not_yet = ks(1, 0, 1, true, false);
        assert_eq!(classify(&not_yet, &not_yet, Found::Absent, Expiry::Live, ONE).0, Class::Ok);
        let deleted = ks(4, 4, 0, false, true);
        assert_eq!(classify(&deleted, &deleted, Found::Absent, Expiry::Live, ONE).0, Class::Ok);
        let deleting = ks(4, 3, 0, true, true);
        assert_eq!(classify(&deleting, &deleting, Found::Absent, Expiry::Live, ONE).0, Class::Ok, "a failed delete may have landed");
        assert_eq!(classify(&acked, &ks(4, 3, 1, true, true), Found::Absent, Expiry::Live, ONE).0, Class::Ok, "a delete begun during the read");
        assert_eq!(classify(&acked, &acked, Found::Absent, Expiry::Either, ONE).0, Class::Ok, "about to expire");
        let range = Judged { one_row: false, ..ONE };
        assert_eq!(classify(&acked, &acked, Found::Absent, Expiry::Live, range).0, Class::Ok, "a read of several rows judges the rows it got");
    }

    #[test]
    fn a_delete_and_a_put_begun_during_the_read_both_stay_possible() {
        // while the read ran: write 4 deletes, write 5 puts and is acknowledged, which leaves
        // only 5's kind in the window — yet the read may have met the delete
        let sent = ks(3, 3, 0, true, false);
        let end = ks(5, 5, 0, true, false);
        assert_eq!(classify(&sent, &end, Found::Absent, Expiry::Live, ONE).0, Class::Ok);
        // the other way round: a put then an acknowledged delete, and the read met the put
        let sent = ks(3, 3, 0, false, true);
        let end = ks(5, 5, 0, false, true);
        assert_eq!(classify(&sent, &end, row(4), Expiry::Live, ONE).0, Class::Ok);
        // a table without deletes: no row is missing still
        let puts_only = Judged { deletes: false, ..ONE };
        assert_eq!(classify(&ks(3, 3, 0, true, false), &ks(5, 5, 0, true, false), Found::Absent, Expiry::Live, puts_only).0, Class::Missing);
    }

    #[test]
    fn a_row_after_an_acknowledged_delete_is_resurrected() {
        let deleted = ks(4, 4, 0, false, true);
        assert_eq!(classify(&deleted, &deleted, row(2), Expiry::Live, ONE).0, Class::Resurrected);
        assert_eq!(classify(&deleted, &ks(5, 4, 1, true, true), row(5), Expiry::Live, ONE).0, Class::Ok, "an upsert began during the read");
        let then_put = ks(5, 4, 0, true, true);
        assert_eq!(classify(&then_put, &then_put, row(2), Expiry::Live, ONE).0, Class::Resurrected, "older than a delete that may be the floor");
    }

    #[test]
    fn corrupt_unknown_and_expired() {
        let s = ks(2, 2, 0, true, false);
        assert_eq!(classify(&s, &s, Found::Row { newest: Some(2), corrupt: true }, Expiry::Live, ONE).0, Class::Corrupt);
        let unknown = KeyState::default();
        assert_eq!(classify(&unknown, &ks(1, 0, 1, true, false), Found::Absent, Expiry::Live, ONE), (Class::Unchecked, true));
        assert_eq!(classify(&s, &s, row(2), Expiry::Expired, ONE).0, Class::Expired);
        assert_eq!(classify(&s, &s, Found::Absent, Expiry::Expired, ONE).0, Class::Ok);
        assert_eq!(classify(&s, &s, row(2), Expiry::Either, ONE).0, Class::Ok);
        assert_eq!(classify(&s, &s, Found::Absent, Expiry::Unknown, ONE).0, Class::Unchecked, "expiring, and when is not known");
        assert_eq!(classify(&s, &s, row(2), Expiry::Unknown, ONE).0, Class::Ok);
        assert!(Class::VIOLATIONS.iter().all(|c| c.is_violation() && Class::parse(c.as_str()) == Some(*c)));
        assert!(!Class::Ok.is_violation() && !Class::Unchecked.is_violation());
    }
}
