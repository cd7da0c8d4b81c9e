import CostAccounting
import HTTP2
import TLS

/// The overhead kinds of every protocol a run reads, registered before anything reads
/// `OverheadKind.all` (connections.csv's header is written before the first packet).
enum RunProtocols {
    static let overheadKinds: [OverheadKind] = [.tlsControl, .h2Control]

    static func register() { _ = overheadKinds }
}
