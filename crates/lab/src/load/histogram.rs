//! The HDR latency histogram every driver fills: how one is made, and its
//! portable V2 encoding (what the store keeps and the remote agent sends).
//! Apart from [`super::result`] so a driver's report types can sit in
//! `LoadResult` without the driver importing the result module back.

use hdrhistogram::Histogram;

/// An empty auto-resizing microsecond histogram with 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits is a valid precision")
}

/// `h` in HdrHistogram's portable V2 encoding, as the store keeps it.
pub fn encode_histogram(h: &Histogram<u64>) -> Vec<u8> {
    use hdrhistogram::serialization::{Serializer, V2Serializer};
    let mut out = Vec::new();
    // Serializing into a Vec cannot fail on I/O.
    let _ = V2Serializer::new().serialize(h, &mut out);
    out
}

/// Reads [`encode_histogram`]'s bytes back; `None` when they are not a V2 histogram.
pub fn decode_histogram(bytes: &[u8]) -> Option<Histogram<u64>> {
    use hdrhistogram::serialization::Deserializer;
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .ok()
}
