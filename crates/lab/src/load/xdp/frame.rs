//! Ethernet/IPv4/UDP framing for AF_XDP, sans-IO: a header template per
//! flow, filled per datagram with its lengths and checksums (RFC 1071's
//! ones'-complement sum; UDP's over RFC 768's pseudo-header), and the
//! reverse: a received frame's UDP payload, if it is one of ours.

use std::net::{Ipv4Addr, SocketAddrV4};

/// Ethernet (14) + IPv4 without options (20) + UDP (8).
pub(crate) const HEADERS: usize = 42;

/// One flow's addresses: who sends, to whom, through which MACs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Flow {
    /// This end's MAC.
    pub src_mac: [u8; 6],
    /// The next hop's MAC.
    pub dst_mac: [u8; 6],
    /// This end's address and UDP port.
    pub src: SocketAddrV4,
    /// The far end's address and UDP port.
    pub dst: SocketAddrV4,
}

/// RFC 1071: the 16-bit ones'-complement sum of `data` (big-endian
/// words, an odd byte padded with zero), added to `sum`, not yet folded.
fn add_words(mut sum: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    sum
}

/// Folds the carries and complements: the checksum field's value.
fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// RFC 791's header checksum of an IPv4 header whose checksum field is zero.
pub(crate) fn ipv4_checksum(header: &[u8]) -> u16 {
    fold(add_words(0, header))
}

/// Writes the headers for a `payload_len`-byte datagram of `flow` into
/// `frame[..HEADERS]`, the payload already at `frame[HEADERS..]`; returns
/// the frame's length. `id` is the IPv4 identification field.
pub(crate) fn write_headers(frame: &mut [u8], flow: &Flow, payload_len: usize, id: u16) -> usize {
    let udp_len = (8 + payload_len) as u16;
    let ip_len = 20 + udp_len;
    let (src, dst) = (flow.src.ip().octets(), flow.dst.ip().octets());
    let h = &mut frame[..HEADERS];
    h[0..6].copy_from_slice(&flow.dst_mac);
    h[6..12].copy_from_slice(&flow.src_mac);
    h[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    h[14..24].copy_from_slice(&[0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17]);
    h[16..18].copy_from_slice(&ip_len.to_be_bytes());
    h[18..20].copy_from_slice(&id.to_be_bytes());
    h[24..26].copy_from_slice(&[0, 0]);
    h[26..30].copy_from_slice(&src);
    h[30..34].copy_from_slice(&dst);
    let ip_sum = ipv4_checksum(&h[14..34]);
    h[24..26].copy_from_slice(&ip_sum.to_be_bytes());
    h[34..36].copy_from_slice(&flow.src.port().to_be_bytes());
    h[36..38].copy_from_slice(&flow.dst.port().to_be_bytes());
    h[38..40].copy_from_slice(&udp_len.to_be_bytes());
    h[40..42].copy_from_slice(&[0, 0]);
    let end = HEADERS + payload_len;
    let pseudo = add_words(add_words(17 + u32::from(udp_len), &src), &dst);
    let udp_sum = match fold(add_words(pseudo, &frame[34..end])) {
        0 => 0xffff, // RFC 768: a computed zero is sent as all ones
        s => s,
    };
    frame[40..42].copy_from_slice(&udp_sum.to_be_bytes());
    end
}

/// A received UDP datagram: where from, to which of our ports, and the
/// payload's place in the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Datagram {
    /// The sender's address and port.
    pub from: SocketAddrV4,
    /// Our UDP port it came to.
    pub to_port: u16,
    /// The payload is `frame[payload.0..payload.1]`.
    pub payload: (usize, usize),
}

/// The UDP datagram in `frame`, if it is IPv4 without options and its
/// lengths agree with the frame; `None` for anything else.
pub(crate) fn parse_udp(frame: &[u8]) -> Option<Datagram> {
    let h = frame.get(..HEADERS)?;
    if h[12..14] != [0x08, 0x00] || h[14] != 0x45 || h[23] != 17 {
        return None;
    }
    let ip_len = usize::from(u16::from_be_bytes([h[16], h[17]]));
    let udp_len = usize::from(u16::from_be_bytes([h[38], h[39]]));
    if udp_len < 8 || 20 + udp_len > ip_len || 14 + ip_len > frame.len() {
        return None;
    }
    let src = Ipv4Addr::new(h[26], h[27], h[28], h[29]);
    Some(Datagram {
        from: SocketAddrV4::new(src, u16::from_be_bytes([h[34], h[35]])),
        to_port: u16::from_be_bytes([h[36], h[37]]),
        payload: (HEADERS, 34 + udp_len),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow() -> Flow {
        Flow {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            src: "198.18.0.1:40000".parse().unwrap(),
            dst: "198.18.0.2:53".parse().unwrap(),
        }
    }

    #[test]
    fn checksums_verify_and_the_frame_parses_back() {
        let payload = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x01a\x00\x00\x01\x00\x01";
        let mut frame = [0u8; 128];
        frame[HEADERS..HEADERS + payload.len()].copy_from_slice(payload);
        let len = write_headers(&mut frame, &flow(), payload.len(), 7);
        assert_eq!(len, HEADERS + payload.len());
        // A receiver's check: the sum over the header, checksum included, is all ones.
        assert_eq!(fold(add_words(0, &frame[14..34])), 0);
        let udp_len = (len - 34) as u32;
        let pseudo = add_words(add_words(17 + udp_len, &[198, 18, 0, 1]), &[198, 18, 0, 2]);
        assert_eq!(fold(add_words(pseudo, &frame[34..len])), 0);
        // The reply's direction, parsed back.
        let d = parse_udp(&frame[..len]).unwrap();
        assert_eq!(d.from, "198.18.0.1:40000".parse().unwrap());
        assert_eq!(d.to_port, 53);
        assert_eq!(&frame[d.payload.0..d.payload.1], payload);
        // Truncated or not UDP: not ours.
        assert_eq!(parse_udp(&frame[..len - 1]), None);
        frame[23] = 6;
        assert_eq!(parse_udp(&frame[..len]), None);
    }

    #[test]
    fn the_ip_checksum_matches_a_known_header() {
        // RFC 1071's worked header (Wikipedia's IPv4 example): 0xb861.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0, 0, 0xc0, 0xa8, 0x00,
            0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ipv4_checksum(&h), 0xb861);
    }
}
