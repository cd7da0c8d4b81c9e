import CaptureIO
// INTERFACE STUB — implementation pending (PacketLayers helper).

/// Decodes frames in place, link layer to TCP. One instance per capture file; it keeps
/// the IPv4 fragments that wait for reassembly.
public final class PacketDecoder {
    public init(maxPendingFragmentBytes: Int = 8 << 20) {
        fatalError("not implemented")
    }

    public func decode(_ frame: CapturedFrame) -> DecodeResult {
        fatalError("not implemented")
    }
}
