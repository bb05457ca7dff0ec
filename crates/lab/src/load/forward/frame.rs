//! The test frame, sans IO: RFC 2544 frame sizes counted as Ethernet
//! frames, the payload that carries a sequence number and a send timestamp,
//! and the receiver's sequence tracker (loss, reordering, duplicates).

use serde::{Deserialize, Serialize};

/// RFC 2544 section 9.1's frame sizes for Ethernet.
pub const RFC2544_SIZES: [u32; 7] = [64, 128, 256, 512, 1024, 1280, 1518];

/// Ethernet header (14) + FCS (4) + IPv4 header (20) + UDP header (8).
pub const FRAME_OVERHEAD: u32 = 14 + 4 + 20 + 8;
/// Preamble and start delimiter (8) + inter-frame gap (12): what a frame
/// costs on the wire beyond its own bytes, for line rate.
pub const WIRE_OVERHEAD: u32 = 20;

/// Ethernet frame bytes, FCS included (RFC 2544's "frame size").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FrameSize(pub u32);

impl FrameSize {
    /// Checks a frame size against Ethernet's minimum and the link MTU.
    pub fn checked(bytes: u32, mtu: u32) -> Result<FrameSize, String> {
        let max = mtu + 18;
        if bytes < 64 {
            return Err(format!(
                "frame size {bytes} is below Ethernet's minimum of 64 bytes; use 64 to {max}"
            ));
        }
        if bytes > max {
            return Err(format!(
                "frame size {bytes} does not fit the lab's MTU of {mtu} (at most {max}-byte frames); use 64 to {max} or raise the router's `mtu`"
            ));
        }
        Ok(FrameSize(bytes))
    }

    /// UDP payload bytes that make a frame of this size (64 → 18).
    pub fn payload(self) -> usize {
        (self.0 - FRAME_OVERHEAD) as usize
    }

    /// Line rate in frames/s on a link of `gbit` Gbit/s.
    pub fn line_rate(self, gbit: f64) -> f64 {
        gbit * 1e9 / (f64::from(self.0 + WIRE_OVERHEAD) * 8.0)
    }

    /// Gbit/s of frame bytes (FCS included, preamble and gap not) at `pps`.
    pub fn gbit_s(self, pps: f64) -> f64 {
        pps * f64::from(self.0) * 8.0 / 1e9
    }
}

/// Marks a payload as ours, so stray packets are not counted.
const MAGIC: u16 = 0x5c1a;
/// Bytes the payload header takes: magic, sequence, timestamp.
pub const HEADER: usize = 2 + 8 + 8;

/// Writes the header into the front of `buf` (at least [`HEADER`] bytes).
pub fn encode(buf: &mut [u8], seq: u64, sent_ns: u64) {
    buf[0..2].copy_from_slice(&MAGIC.to_le_bytes());
    buf[2..10].copy_from_slice(&seq.to_le_bytes());
    buf[10..18].copy_from_slice(&sent_ns.to_le_bytes());
}

/// Reads `(sequence, send timestamp in ns)` back, if `buf` is ours.
pub fn decode(buf: &[u8]) -> Option<(u64, u64)> {
    if buf.len() < HEADER || buf[0..2] != MAGIC.to_le_bytes() {
        return None;
    }
    let seq = u64::from_le_bytes(buf[2..10].try_into().ok()?);
    let ts = u64::from_le_bytes(buf[10..18].try_into().ok()?);
    Some((seq, ts))
}

/// The receiver's view of one flow's sequence numbers.
#[derive(Clone, Debug, Default)]
pub(crate) struct SeqTracker {
    seen: Vec<u64>,
    highest: Option<u64>,
    /// Distinct sequence numbers received.
    pub unique: u64,
    /// Frames whose sequence number had already arrived.
    pub duplicates: u64,
    /// Frames that arrived after a higher sequence number (late).
    pub reordered: u64,
}

impl SeqTracker {
    pub fn observe(&mut self, seq: u64) {
        let (word, bit) = ((seq / 64) as usize, seq % 64);
        if word >= self.seen.len() {
            self.seen.resize((word + 1).next_power_of_two(), 0);
        }
        if self.seen[word] & (1 << bit) != 0 {
            self.duplicates += 1;
            return;
        }
        self.seen[word] |= 1 << bit;
        self.unique += 1;
        match self.highest {
            Some(h) if seq < h => self.reordered += 1,
            _ => self.highest = Some(seq),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixty_four_byte_frames_carry_eighteen_bytes() {
        assert_eq!(FrameSize(64).payload(), 18);
        assert_eq!(FrameSize(1518).payload(), 1472);
        assert!(FrameSize(64).payload() >= HEADER);
    }

    #[test]
    fn sizes_outside_ethernet_or_the_mtu_are_refused() {
        assert!(FrameSize::checked(63, 1500)
            .unwrap_err()
            .contains("minimum of 64"));
        assert!(FrameSize::checked(1519, 1500)
            .unwrap_err()
            .contains("MTU of 1500"));
        assert_eq!(FrameSize::checked(1518, 1500).unwrap(), FrameSize(1518));
    }

    #[test]
    fn line_rate_of_ten_gigabit_is_the_textbook_figure() {
        // 10GbE at 64-byte frames: 14,880,952 frames/s.
        assert!((FrameSize(64).line_rate(10.0) - 14_880_952.4).abs() < 1.0);
        assert!((FrameSize(1518).line_rate(10.0) - 812_743.8).abs() < 1.0);
    }

    #[test]
    fn header_round_trips_and_strangers_are_ignored() {
        let mut buf = [0u8; 18];
        encode(&mut buf, 42, 7_000_000);
        assert_eq!(decode(&buf), Some((42, 7_000_000)));
        assert_eq!(decode(&[0u8; 18]), None);
        assert_eq!(decode(&buf[..10]), None);
    }

    #[test]
    fn tracker_counts_duplicates_and_late_frames() {
        let mut t = SeqTracker::default();
        for s in [0, 1, 3, 2, 3, 200] {
            t.observe(s);
        }
        assert_eq!(t.unique, 5);
        assert_eq!(t.duplicates, 1);
        assert_eq!(t.reordered, 1, "2 arrived after 3");
    }
}
