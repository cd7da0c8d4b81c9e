import CostAccounting
import HTTP2
import HTTP3
import TLS

/// The overhead kinds a run registers (TLS's, HTTP/2's and HTTP/3's), as MeterAuditKit does before any
/// report reads `OverheadKind.all`: a test of an output keyed by kind reads this first.
let runOverheadKinds: [OverheadKind] = [.tlsControl, .h2Control, .h3Control]
