//! The DNS message codec, sans IO: query templates encoded once with
//! hickory-proto, stamped with an ID per send, and responses read just far
//! enough to match them (ID and question) and count their RCODE.

use hickory_proto::op::{Header, Message, MessageType, Query as HQuery, ResponseCode};
use hickory_proto::rr::{Name, RecordType};
use hickory_proto::serialize::binary::{BinDecodable, BinDecoder};

/// One query: a fully qualified name and a record type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// The fully qualified name asked for.
    pub name: Name,
    /// The record type asked for (A, AAAA, PTR, ...).
    pub rtype: RecordType,
}

/// Header length in bytes (RFC 1035 section 4.1.1).
const HEADER_LEN: usize = 12;

/// A query encoded once; only its ID changes between sends.
#[derive(Clone, Debug)]
pub struct Template {
    wire: Vec<u8>,
}

impl Template {
    /// Encodes `q` as a recursion-desired query with ID 0.
    pub fn new(q: &Query) -> Result<Template, String> {
        let mut m = Message::new();
        m.set_id(0)
            .set_message_type(MessageType::Query)
            .set_recursion_desired(true)
            .add_query(HQuery::query(q.name.clone(), q.rtype));
        let wire = m
            .to_vec()
            .map_err(|e| format!("cannot encode query for {}: {e}", q.name))?;
        Ok(Template { wire })
    }

    /// Writes the query with `id` into `buf`, returning its length.
    pub fn write(&self, id: u16, buf: &mut [u8]) -> usize {
        let n = self.wire.len();
        buf[..n].copy_from_slice(&self.wire);
        buf[..2].copy_from_slice(&id.to_be_bytes());
        n
    }

    /// The question section's bytes (name, type, class).
    pub fn question(&self) -> &[u8] {
        &self.wire[HEADER_LEN..]
    }
}

/// What the load generator needs from a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response<'a> {
    /// The message ID, which matches the query's.
    pub id: u16,
    /// The response code (NOERROR, NXDOMAIN, SERVFAIL, ...).
    pub rcode: ResponseCode,
    /// The first question's bytes, if the response echoes one.
    pub question: Option<&'a [u8]>,
}

/// Reads a response's header and locates its question; `None` for
/// anything that is not a DNS response.
pub fn parse_response(buf: &[u8]) -> Option<Response<'_>> {
    let header = Header::read(&mut BinDecoder::new(buf)).ok()?;
    if header.message_type() != MessageType::Response {
        return None;
    }
    let question = if header.query_count() > 0 {
        question_span(buf).map(|end| &buf[HEADER_LEN..end])
    } else {
        None
    };
    Some(Response {
        id: header.id(),
        rcode: header.response_code(),
        question,
    })
}

/// End offset of the first question: an uncompressed name (a question's
/// name is first in the message, so nothing precedes it to point at), then
/// type and class.
fn question_span(buf: &[u8]) -> Option<usize> {
    let mut i = HEADER_LEN;
    loop {
        let len = *buf.get(i)? as usize;
        if len & 0xC0 != 0 {
            return None;
        }
        i += 1 + len;
        if len == 0 {
            break;
        }
    }
    let end = i + 4;
    (end <= buf.len()).then_some(end)
}

/// Whether a response's question is the query's (names compare without
/// regard to ASCII case, RFC 4343).
pub fn same_question(query: &[u8], response: Option<&[u8]>) -> bool {
    response.is_some_and(|r| r.eq_ignore_ascii_case(query))
}

/// RCODE name as dig and dnsperf print it: NOERROR, SERVFAIL, ...
pub fn rcode_name(code: ResponseCode) -> String {
    match code {
        ResponseCode::Unknown(n) => format!("RCODE{n}"),
        other => format!("{other:?}").to_ascii_uppercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_proto::rr::{Name, RecordType};

    fn query(name: &str) -> Query {
        Query {
            name: Name::from_ascii(name).unwrap(),
            rtype: RecordType::A,
        }
    }

    #[test]
    fn a_response_matches_its_query() {
        let t = Template::new(&query("h1.bench.test.")).unwrap();
        let mut buf = [0u8; 512];
        let n = t.write(0xBEEF, &mut buf);
        let mut reply = Message::from_vec(&buf[..n]).unwrap();
        assert_eq!(reply.id(), 0xBEEF);
        assert!(reply.recursion_desired());
        reply
            .set_message_type(MessageType::Response)
            .set_response_code(ResponseCode::NXDomain);
        let wire = reply.to_vec().unwrap();
        let r = parse_response(&wire).unwrap();
        assert_eq!(r.id, 0xBEEF);
        assert_eq!(rcode_name(r.rcode), "NXDOMAIN");
        assert!(same_question(t.question(), r.question));
        let other = Template::new(&query("h2.bench.test.")).unwrap();
        assert!(!same_question(other.question(), r.question));
    }

    #[test]
    fn queries_and_garbage_are_not_responses() {
        let t = Template::new(&query("h1.bench.test.")).unwrap();
        let mut buf = [0u8; 512];
        let n = t.write(1, &mut buf);
        assert!(parse_response(&buf[..n]).is_none());
        assert!(parse_response(&[1, 2, 3]).is_none());
        assert_eq!(rcode_name(ResponseCode::ServFail), "SERVFAIL");
        assert_eq!(rcode_name(ResponseCode::NoError), "NOERROR");
    }
}
