//! A host's clock offset from the coordinator's, measured over ssh.
//!
//! Method: Cristian's algorithm (F. Cristian, "Probabilistic clock
//! synchronization", Distributed Computing 3(3), 1989), as NTP's on-wire
//! offset estimate uses it: for an exchange sent at local time `t0`,
//! answered with remote time `tr` and received at local `t1`, the offset is
//! `tr - (t0 + t1) / 2`, with an error of at most half the round trip. Of
//! several exchanges the one with the shortest round trip is kept, because
//! its bound is the tightest.

/// One request/answer exchange, in nanoseconds since the Unix epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchange {
    pub sent: i128,
    pub remote: i128,
    pub received: i128,
}

/// The estimated offset (remote minus local) and its error bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Offset {
    /// Remote clock minus coordinator clock, in nanoseconds.
    pub offset_ns: i64,
    /// Half the round trip of the exchange used: the estimate's error bound.
    pub bound_ns: i64,
}

impl Offset {
    /// A coordinator instant (ns since the epoch) on the remote clock.
    pub fn to_remote(self, local_ns: i128) -> i128 {
        local_ns + self.offset_ns as i128
    }
}

/// The offset from the exchange with the shortest round trip; `None` when
/// there is no usable exchange (every one received before it was sent).
pub fn estimate(exchanges: &[Exchange]) -> Option<Offset> {
    exchanges
        .iter()
        .filter(|e| e.received >= e.sent)
        .min_by_key(|e| e.received - e.sent)
        .map(|e| Offset {
            offset_ns: (e.remote - (e.sent + e.received) / 2) as i64,
            bound_ns: ((e.received - e.sent) / 2) as i64,
        })
}

/// Now, in nanoseconds since the Unix epoch (the realtime clock, which both
/// sides share a definition of).
pub fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_exchange_gives_the_true_offset() {
        // Remote is 5 ms ahead; the answer is stamped mid-way.
        let e = Exchange {
            sent: 1_000_000,
            remote: 1_000_000 + 500_000 + 5_000_000,
            received: 2_000_000,
        };
        let o = estimate(&[e]).unwrap();
        assert_eq!(o.offset_ns, 5_000_000);
        assert_eq!(o.bound_ns, 500_000);
        assert_eq!(o.to_remote(10), 5_000_010);
    }

    #[test]
    fn the_shortest_round_trip_wins() {
        let slow = Exchange {
            sent: 0,
            remote: 9_000_000,
            received: 10_000_000,
        };
        let fast = Exchange {
            sent: 20_000_000,
            remote: 20_100_000,
            received: 20_200_000,
        };
        let o = estimate(&[slow, fast]).unwrap();
        assert_eq!(o.offset_ns, 0);
        assert_eq!(o.bound_ns, 100_000);
    }

    #[test]
    fn no_usable_exchange() {
        assert!(estimate(&[]).is_none());
        let backwards = Exchange {
            sent: 10,
            remote: 5,
            received: 1,
        };
        assert!(estimate(&[backwards]).is_none());
    }
}
