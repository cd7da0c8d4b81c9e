import CostAccounting
import HTTP2
import HTTP3
import QUIC
import TLS

/// The overhead kinds a run registers (TLS's, HTTP/2's, HTTP/3's and QUIC's), as MeterAuditKit does before any
/// report reads `OverheadKind.all`: a test of an output keyed by kind reads this first.
let runOverheadKinds: [OverheadKind] = [.tlsControl, .h2Control, .h3Control, .quicHandshake, .quicAck, .quicControl, .quicPadding]
