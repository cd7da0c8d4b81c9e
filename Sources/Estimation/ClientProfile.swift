/// Which request fields a client's network stack adds itself, so that the app's view of the
/// request (`allHTTPHeaderFields`) lacks them (docs/METERING.md §4.4).
public struct ClientProfile: Sendable, Equatable {
    public var name: String
    /// Lowercased field names.
    public var stackAddedFields: Set<String>

    public init(name: String, stackAddedFields: [String]) {
        self.name = name
        self.stackAddedFields = Set(stackAddedFields.map { $0.lowercased() })
    }

    /// NSURLSession: seed 001 names Host, Connection and Accept; seed 002 the
    /// configuration's Accept-Encoding, Accept-Language and User-Agent; Content-Length is
    /// computed by the stack from the body.
    public static let urlSession = ClientProfile(
        name: "urlsession",
        stackAddedFields: [
            "Host", "Connection", "Accept", "Accept-Encoding", "Accept-Language", "User-Agent", "Content-Length",
        ])

    public static let known: [ClientProfile] = [.urlSession]

    public static func named(_ name: String) -> ClientProfile? {
        known.first { $0.name == name.lowercased() }
    }
}
