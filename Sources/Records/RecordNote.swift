/// A remark on one record that its message's anomalies do not tell (HAR entries), written in
/// the `anomalies` column after them.
public enum RecordNote: Sendable, Equatable {
    /// The browser answered from its cache: nothing crossed the network.
    case fromCache
    /// The entry carried this many WebSocket messages, which are not HTTP messages and are not sized.
    case webSocketMessages(Int)
    /// The request body was serialized from `postData.params` (no `text`).
    case bodyFromParams
    /// The HAR does not hold the body.
    case bodyUnknown
    /// `startedDateTime` lay outside 1970...2262 and was clamped into it.
    case timeClamped
    /// A size the exporter rule uses was over 1 TiB and is taken as unknown.
    case sizeOutOfRange
    /// The field at this path (array indices left out) had a type no size or body needs, and was read as absent.
    case unexpectedType(String)
    /// A Charles size of this part (`headers`, `body`) contradicted the recorded message and was rebuilt from it.
    case sizeRebuilt(String)

    /// The text in outputs.
    public var description: String {
        switch self {
        case .fromCache: return "from-cache"
        case let .webSocketMessages(count): return "websocket-messages:\(count)"
        case .bodyFromParams: return "body-from-params"
        case .bodyUnknown: return "body-unknown"
        case .timeClamped: return "time-clamped"
        case .sizeOutOfRange: return "size-out-of-range"
        case let .unexpectedType(path): return "unexpected-type:\(path)"
        case let .sizeRebuilt(part): return "size-rebuilt:\(part)"
        }
    }
}
