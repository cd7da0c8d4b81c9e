import CaptureIO
import PacketLayers

/// pcap, pcapng and their gzip forms through `CaptureReader` (told apart by content, as in a
/// run), every frame read and decoded to its TCP segment.
enum CaptureReaderEntry {
    static func run(_ input: UnsafeRawBufferPointer) {
        let path = InputFile.shared.write(input)
        guard let reader = try? CaptureReader(path: path) else { return }
        let decoder = PacketDecoder(maxPendingFragmentBytes: 64 << 10)
        var payloadBytes = 0
        do {
            while let frame = try reader.next() {
                if case let .segment(segment) = decoder.decode(frame) {
                    payloadBytes &+= segment.payload.count
                }
            }
        } catch {
            // A capture that breaks off ends with an error: expected for most inputs.
        }
        blackHole(payloadBytes)
    }
}

/// One frame: the link type from the first byte, how much snaplen cut from the second, the
/// rest the frame's bytes.
enum PacketDecoderEntry {
    /// The link types the decoder knows, and one it does not.
    static let linkTypes: [Int32] = [
        LinkType.null, LinkType.ethernet, LinkType.raw, 12, 14, LinkType.loop, LinkType.linuxSLL,
        LinkType.ipv4, LinkType.ipv6, LinkType.linuxSLL2, 147,
    ]

    static func run(_ input: UnsafeRawBufferPointer) {
        var cursor = InputCursor(input)
        let linkType = linkTypes[Int(cursor.u8()) % linkTypes.count]
        let cut = Int(cursor.u8())
        let bytes = cursor.rest()
        let frame = CapturedFrame(
            number: 1, timestamp: 1_700_000_000_000_000_000, linkType: linkType, interface: 0,
            originalLength: bytes.count + cut, bytes: bytes)
        let decoder = PacketDecoder(maxPendingFragmentBytes: 64 << 10)
        if case let .segment(segment) = decoder.decode(frame) {
            blackHole(segment.payload.count &+ segment.payloadLength)
        }
    }
}

/// Keeps a computed value alive so the work producing it is not optimized away.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
