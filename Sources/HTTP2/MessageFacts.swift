import MessageModel

extension ProtocolFacts {
    /// An HTTP/2 message's facts when its HEADERS (or PUSH_PROMISE) opens it: its stream, no
    /// frames counted yet, the status and request line as pseudo-fields of the header block.
    @inline(__always) static func http2(stream: UInt32) -> ProtocolFacts {
        ProtocolFacts(.h2, stream: UInt64(stream), frames: 0, startLineInHeaderBlock: true)
    }
}

extension OverheadID {
    /// HTTP/2's connection preface and control frames (`h2_control` in the outputs).
    @inlinable public static var h2Control: OverheadID { OverheadID(rawValue: 1) }
}
