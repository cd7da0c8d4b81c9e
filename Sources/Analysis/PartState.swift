import CaptureIO
import Estimation
import CostAccounting
import Flows
import MessageModel

/// A run's figures as bytes, so that a later `meteraudit merge` can add them to other runs'
/// (docs/SCALE.md): every integer and every relative error exactly (8 bytes each, a
/// `Double`'s bits), in a fixed order. Little-endian, no alignment; the reader checks each
/// read against the end and fails with where the bytes ran out.
public struct StateEncoder {
    public private(set) var bytes: [UInt8] = []
    /// Where the bytes go, `flushSize` at a time, when they are written out as they come; nil
    /// keeps them all in `bytes`.
    private let sink: (([UInt8]) -> Void)?
    static let flushSize = 1 << 16

    public init() { sink = nil }

    /// An encoder that hands its bytes to `sink` about 64 KiB at a time, so a run's figures
    /// (tens of MB on a large HAR of many endpoints) are never whole in memory; `flush()` hands
    /// on the rest.
    public init(flushingTo sink: @escaping ([UInt8]) -> Void) {
        self.sink = sink
        bytes.reserveCapacity(Self.flushSize + 64)
    }

    public mutating func int(_ value: Int) { uint64(UInt64(bitPattern: Int64(value))) }

    public mutating func int64(_ value: Int64) { uint64(UInt64(bitPattern: value)) }

    public mutating func uint64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        flushIfFull()
    }

    public mutating func double(_ value: Double) { uint64(value.bitPattern) }

    public mutating func bool(_ value: Bool) {
        bytes.append(value ? 1 : 0)
        flushIfFull()
    }

    public mutating func string(_ value: String) {
        int(value.utf8.count)
        bytes.append(contentsOf: value.utf8)
        flushIfFull()
    }

    /// Hands what is buffered to the sink (when there is one).
    public mutating func flush() {
        guard let sink, !bytes.isEmpty else { return }
        sink(bytes)
        bytes.removeAll(keepingCapacity: true)
    }

    private mutating func flushIfFull() {
        if sink != nil, bytes.count >= Self.flushSize { flush() }
    }

    public mutating func optionalInt64(_ value: Int64?) {
        bool(value != nil)
        if let value { int64(value) }
    }

    public mutating func optionalString(_ value: String?) {
        bool(value != nil)
        if let value { string(value) }
    }

    public mutating func ints(_ values: [Int]) {
        int(values.count)
        for value in values { int(value) }
    }

    /// The bytes so far are handed on (written out); what follows starts a new buffer.
    public mutating func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }
}

/// Reads what `StateEncoder` wrote.
public struct StateDecoder {
    public struct Truncated: Error, CustomStringConvertible {
        public var offset: Int
        public init(offset: Int) { self.offset = offset }
        public var description: String { "ends early (at byte \(offset) of its figures)" }
    }

    public struct Malformed: Error, CustomStringConvertible {
        public var reason: String
        public init(reason: String) { self.reason = reason }
        public var description: String { reason }
    }

    private let bytes: [UInt8]
    public private(set) var position = 0

    public init(bytes: [UInt8]) { self.bytes = bytes }

    public var atEnd: Bool { position == bytes.count }

    private mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count - position else { throw Truncated(offset: position) }
        defer { position += count }
        return bytes[position..<position + count]
    }

    public mutating func uint64() throws -> UInt64 {
        let slice = try take(8)
        var value: UInt64 = 0
        for (shift, byte) in slice.enumerated() { value |= UInt64(byte) << UInt64(shift * 8) }
        return value
    }

    /// The largest magnitude of a count or sum read with `int()`: 2^46 (70 TB), beyond any
    /// run's figures. Adding up to `maxParts` of them cannot overflow, so merging figures from
    /// files needs no checked arithmetic.
    public static let maxMagnitude = 1 << 46
    /// How many parts one merge may add: `maxParts × maxMagnitude` = 2^62.
    public static let maxParts = 1 << 16

    public mutating func int() throws -> Int {
        let value = Int(Int64(bitPattern: try uint64()))
        guard value.magnitude <= Self.maxMagnitude else {
            throw Malformed(reason: "a figure of \(value) at byte \(position - 8), more than a part holds (2^46)")
        }
        return value
    }

    public mutating func int64() throws -> Int64 { Int64(bitPattern: try uint64()) }

    public mutating func double() throws -> Double { Double(bitPattern: try uint64()) }

    public mutating func bool() throws -> Bool {
        let byte = try take(1).first!
        guard byte <= 1 else { throw Malformed(reason: "a flag of \(byte) at byte \(position - 1)") }
        return byte == 1
    }

    /// A count of things that each take at least `minimumBytes` bytes: checked against what is
    /// left before anything is reserved for it.
    public mutating func count(minimumBytes: Int = 1) throws -> Int {
        let value = try int()
        guard value >= 0, value <= (bytes.count - position) / max(minimumBytes, 1) else {
            throw Truncated(offset: position)
        }
        return value
    }

    public mutating func string() throws -> String {
        let length = try count()
        return String(decoding: try take(length), as: UTF8.self)
    }

    public mutating func optionalInt64() throws -> Int64? { try bool() ? try int64() : nil }

    public mutating func optionalString() throws -> String? { try bool() ? try string() : nil }

    public mutating func ints() throws -> [Int] {
        let count = try count(minimumBytes: 8)
        var values: [Int] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try int()) }
        return values
    }

    public mutating func doubles() throws -> [Double] {
        let count = try count(minimumBytes: 8)
        var values: [Double] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try double()) }
        return values
    }

    public mutating func int64s() throws -> [Int64] {
        let count = try count(minimumBytes: 8)
        var values: [Int64] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try int64()) }
        return values
    }
}

extension RecordClass {
    init(state decoder: inout StateDecoder) throws {
        let order = try decoder.int()
        guard let value = RecordClass.allCases.first(where: { $0.order == order }) else {
            throw StateDecoder.Malformed(reason: "a record class numbered \(order)")
        }
        self = value
    }
}

extension HTTPProtocol {
    init(state decoder: inout StateDecoder) throws {
        let order = try decoder.int()
        guard HTTPProtocol.allCases.indices.contains(order) else {
            throw StateDecoder.Malformed(reason: "a protocol numbered \(order)")
        }
        self = HTTPProtocol.allCases[order]
    }
}

extension Aggregation {
    /// Every figure, exactly: `init(state:)` reads back an equal aggregation.
    public func encode(to encoder: inout StateEncoder) {
        encoder.int(modelCount)
        encoder.int(estimatorNames.count)
        for name in estimatorNames { encoder.string(name) }
        encoder.int(rankingEstimator ?? -1)
        // In key order: the same figures give the same bytes.
        let groupKeys = groups.keys.sorted()
        encoder.int(groupKeys.count)
        for key in groupKeys {
            key.encode(to: &encoder)
            groups[key]!.encode(to: &encoder)
        }
        let totalKeys = totals.keys.sorted()
        encoder.int(totalKeys.count)
        for key in totalKeys {
            encoder.int(key.order)
            totals[key]!.encode(to: &encoder)
        }
        let protocolKeys = protocolTotals.keys.sorted()
        encoder.int(protocolKeys.count)
        for key in protocolKeys {
            encoder.int(key.wireProtocol.order)
            encoder.int(key.direction.order)
            protocolTotals[key]!.encode(to: &encoder)
        }
        let compressionKeys = headerCompression.keys.sorted()
        encoder.int(compressionKeys.count)
        for key in compressionKeys {
            key.encode(to: &encoder)
            headerCompression[key]!.encode(to: &encoder)
        }
        let compressionTotalKeys = headerCompressionTotals.keys.sorted()
        encoder.int(compressionTotalKeys.count)
        for key in compressionTotalKeys {
            encoder.int(key.order)
            headerCompressionTotals[key]!.encode(to: &encoder)
        }
        let sides = network.keys.sorted()
        encoder.int(sides.count)
        for side in sides {
            encoder.int(side.rawValue)
            network[side]!.encode(to: &encoder)
        }
    }

    public init(state decoder: inout StateDecoder) throws {
        let modelCount = try decoder.int()
        var names: [String] = []
        for _ in 0..<(try decoder.count(minimumBytes: 8)) { names.append(try decoder.string()) }
        guard (0...names.count).contains(modelCount) else {
            throw StateDecoder.Malformed(reason: "\(modelCount) models of \(names.count) estimators")
        }
        let ranking = try decoder.int()
        guard ranking < names.count else { throw StateDecoder.Malformed(reason: "ranking estimator \(ranking) of \(names.count)") }
        self.init(
            estimatorNames: Array(names[..<modelCount]), rankingEstimator: ranking < 0 ? nil : ranking,
            meters: Array(names[modelCount...]))
        // Every group has a figure per estimator (the reports index them by estimator).
        let count = names.count
        func group(_ decoder: inout StateDecoder) throws -> GroupFigures {
            let figures = try GroupFigures(state: &decoder)
            guard figures.estimators.count == count else {
                throw StateDecoder.Malformed(reason: "a group of \(figures.estimators.count) estimators, not \(count)")
            }
            return figures
        }
        func compression(_ decoder: inout StateDecoder) throws -> HeaderCompressionFigures {
            let figures = try HeaderCompressionFigures(state: &decoder)
            guard figures.estimatedHeaders.count == modelCount else {
                throw StateDecoder.Malformed(reason: "header figures of \(figures.estimatedHeaders.count) estimators")
            }
            return figures
        }
        for _ in 0..<(try decoder.count(minimumBytes: 16)) {
            let key = try GroupKey(state: &decoder)
            groups[key] = try group(&decoder)
        }
        for _ in 0..<(try decoder.count(minimumBytes: 8)) {
            let key = try RecordClass(state: &decoder)
            totals[key] = try group(&decoder)
        }
        for _ in 0..<(try decoder.count(minimumBytes: 16)) {
            let key = ProtocolKey(
                wireProtocol: try HTTPProtocol(state: &decoder), direction: try RecordClass(state: &decoder))
            protocolTotals[key] = try group(&decoder)
        }
        for _ in 0..<(try decoder.count(minimumBytes: 16)) {
            let key = try GroupKey(state: &decoder)
            headerCompression[key] = try compression(&decoder)
        }
        for _ in 0..<(try decoder.count(minimumBytes: 8)) {
            let key = try RecordClass(state: &decoder)
            headerCompressionTotals[key] = try compression(&decoder)
        }
        for _ in 0..<(try decoder.count(minimumBytes: 8)) {
            let raw = try decoder.int()
            guard let side = Direction(rawValue: raw) else {
                throw StateDecoder.Malformed(reason: "a direction numbered \(raw)")
            }
            network[side] = try NetworkFigures(state: &decoder)
        }
    }
}

extension GroupKey {
    func encode(to encoder: inout StateEncoder) {
        encoder.string(endpoint)
        encoder.int(direction.order)
    }

    init(state decoder: inout StateDecoder) throws {
        let endpoint = try decoder.string()
        self.init(endpoint: endpoint, direction: try RecordClass(state: &decoder))
    }
}

extension GroupFigures {
    func encode(to encoder: inout StateEncoder) {
        encoder.ints([records, unpaired, incomplete, unmeasured, wireBytes])
        encoder.ints(protocols.counts)
        layers.encode(to: &encoder)
        encoder.int(estimators.count)
        for figures in estimators { figures.encode(to: &encoder) }
        encoder.int(requestTimes.microseconds.count)
        for time in requestTimes.microseconds { encoder.int64(time) }
        encoder.int(requestTimes.untimed)
    }

    init(state decoder: inout StateDecoder) throws {
        let counts = try decoder.ints()
        guard counts.count == 5, counts.allSatisfy({ $0 >= 0 }) else {
            throw StateDecoder.Malformed(reason: "a group's counts \(counts)")
        }
        let protocolCounts = try decoder.ints()
        guard protocolCounts.count == HTTPProtocol.allCases.count else {
            throw StateDecoder.Malformed(reason: "\(protocolCounts.count) protocol counts")
        }
        let layers = try LayerFigures(state: &decoder)
        var estimators: [EstimatorFigures] = []
        for _ in 0..<(try decoder.count(minimumBytes: 8)) { estimators.append(try EstimatorFigures(state: &decoder)) }
        self.init(estimatorCount: estimators.count)
        (records, unpaired, incomplete, unmeasured, wireBytes) = (counts[0], counts[1], counts[2], counts[3], counts[4])
        protocols.counts = protocolCounts
        self.layers = layers
        self.estimators = estimators
        let times = try decoder.int64s()
        requestTimes = RequestTimes(microseconds: times, untimed: try decoder.int())
    }
}

extension EstimatorFigures {
    func encode(to encoder: inout StateEncoder) {
        encoder.ints([count, unestimated, wire, estimated, splitCount, lineError, headersError, bodyError])
        encoder.int(absoluteRelativeErrors.count)
        for error in absoluteRelativeErrors { encoder.double(error) }
        // Known causes by slot, the others by name in byte order.
        encoder.int(causeTallies.known.count)
        for tally in causeTallies.known { encoder.ints([tally.bytes, tally.records]) }
        let others = causeTallies.others.sorted { $0.key.name.utf8Compare($1.key.name) < 0 }
        encoder.int(others.count)
        for (name, tally) in others {
            encoder.string(name.name)
            encoder.ints([tally.bytes, tally.records])
        }
        layers.encode(to: &encoder)
    }

    init(state decoder: inout StateDecoder) throws {
        self.init()
        let counts = try decoder.ints()
        guard counts.count == 8, counts[0] >= 0, counts[1] >= 0, counts[4] >= 0 else {
            throw StateDecoder.Malformed(reason: "an estimator's counts \(counts)")
        }
        (count, unestimated, wire, estimated) = (counts[0], counts[1], counts[2], counts[3])
        (splitCount, lineError, headersError, bodyError) = (counts[4], counts[5], counts[6], counts[7])
        absoluteRelativeErrors = try decoder.doubles()
        let known = try decoder.count(minimumBytes: 8)
        guard known == 0 || known == KnownCause.allCases.count else {
            throw StateDecoder.Malformed(reason: "\(known) known causes, not \(KnownCause.allCases.count)")
        }
        for _ in 0..<known { causeTallies.known.append(try Self.tally(&decoder)) }
        for _ in 0..<(try decoder.count(minimumBytes: 8)) {
            let name = CauseName(try decoder.string())
            causeTallies.others[name] = try Self.tally(&decoder)
        }
        layers = try LayerErrors(state: &decoder)
    }

    private static func tally(_ decoder: inout StateDecoder) throws -> CauseTally {
        let pair = try decoder.ints()
        guard pair.count == 2 else { throw StateDecoder.Malformed(reason: "a cause of \(pair.count) counts") }
        var tally = CauseTally()
        tally.add(bytes: pair[0], records: pair[1])
        return tally
    }
}

extension LayerFigures {
    func encode(to encoder: inout StateEncoder) {
        encoder.ints([tlsRecords, tls, lowerRecords, tcp, ip, frame, retransmitted, lowerBoundRecords, ipShare])
    }

    init(state decoder: inout StateDecoder) throws {
        let values = try decoder.ints()
        guard values.count == 9 else { throw StateDecoder.Malformed(reason: "\(values.count) layer figures") }
        self.init()
        (tlsRecords, tls, lowerRecords, tcp, ip) = (values[0], values[1], values[2], values[3], values[4])
        (frame, retransmitted, lowerBoundRecords, ipShare) = (values[5], values[6], values[7], values[8])
    }
}

extension LayerErrors {
    func encode(to encoder: inout StateEncoder) {
        encoder.ints([tlsCount, tlsEstimated, tls, lowerCount, lowerEstimated, tcp, ip, frame, ipShare])
    }

    init(state decoder: inout StateDecoder) throws {
        let values = try decoder.ints()
        guard values.count == 9 else { throw StateDecoder.Malformed(reason: "\(values.count) layer errors") }
        self.init()
        (tlsCount, tlsEstimated, tls, lowerCount, lowerEstimated) = (values[0], values[1], values[2], values[3], values[4])
        (tcp, ip, frame, ipShare) = (values[5], values[6], values[7], values[8])
    }
}

extension Aggregation {
    /// Whether there are HTTP/3 headers figures (QPACK) to encode: they are a section of their
    /// own, written only when present, so that a part without HTTP/3 records is as before.
    public var hasQPACKFigures: Bool { !qpackCompression.isEmpty || !qpackCompressionTotals.isEmpty }

    /// The HTTP/3 headers figures, exactly, in key order.
    public func encodeQPACKFigures(to encoder: inout StateEncoder) {
        let keys = qpackCompression.keys.sorted()
        encoder.int(keys.count)
        for key in keys {
            key.encode(to: &encoder)
            qpackCompression[key]!.encode(to: &encoder)
        }
        let totalKeys = qpackCompressionTotals.keys.sorted()
        encoder.int(totalKeys.count)
        for key in totalKeys {
            encoder.int(key.order)
            qpackCompressionTotals[key]!.encode(to: &encoder)
        }
    }

    /// Reads back what `encodeQPACKFigures` wrote into this aggregation.
    public mutating func decodeQPACKFigures(_ decoder: inout StateDecoder) throws {
        func compression(_ decoder: inout StateDecoder) throws -> HeaderCompressionFigures {
            let figures = try HeaderCompressionFigures(state: &decoder)
            guard figures.estimatedHeaders.count == modelCount else {
                throw StateDecoder.Malformed(reason: "header figures of \(figures.estimatedHeaders.count) estimators")
            }
            return figures
        }
        for _ in 0..<(try decoder.count(minimumBytes: 16)) {
            let key = try GroupKey(state: &decoder)
            qpackCompression[key] = try compression(&decoder)
        }
        for _ in 0..<(try decoder.count(minimumBytes: 8)) {
            let key = try RecordClass(state: &decoder)
            qpackCompressionTotals[key] = try compression(&decoder)
        }
    }
}

extension HeaderCompressionFigures {
    func encode(to encoder: inout StateEncoder) {
        encoder.ints([records, leftOut, wireHeaders, headerList])
        encoder.ints(estimatedHeaders)
    }

    init(state decoder: inout StateDecoder) throws {
        let values = try decoder.ints()
        guard values.count == 4 else { throw StateDecoder.Malformed(reason: "\(values.count) header figures") }
        let estimated = try decoder.ints()
        self.init(estimatorCount: estimated.count)
        (records, leftOut, wireHeaders, headerList) = (values[0], values[1], values[2], values[3])
        estimatedHeaders = estimated
    }
}

extension NetworkFigures {
    func encode(to encoder: inout StateEncoder) {
        encoder.ints([
            records, lowerBoundRecords, httpOnlyRecords, http, tlsOverhead, retransmitted, headers, link, connections,
            unsharedIP, quicIP, quicFrame, otherUDPIP, otherUDPFrame, quicOverhead, udpHeaders,
        ])
        cost.encode(to: &encoder)
        quicCost.encode(to: &encoder)
    }

    init(state decoder: inout StateDecoder) throws {
        let values = try decoder.ints()
        guard values.count == 16 else { throw StateDecoder.Malformed(reason: "\(values.count) network figures") }
        self.init()
        (records, lowerBoundRecords, httpOnlyRecords, http, tlsOverhead) = (
            values[0], values[1], values[2], values[3], values[4]
        )
        (retransmitted, headers, link, connections, unsharedIP) = (values[5], values[6], values[7], values[8], values[9])
        (quicIP, quicFrame, otherUDPIP, otherUDPFrame) = (values[10], values[11], values[12], values[13])
        (quicOverhead, udpHeaders) = (values[14], values[15])
        cost = try DirectionCost(state: &decoder)
        quicCost = try DirectionCost(state: &decoder)
    }
}

extension LayerBytes {
    func encode(to encoder: inout StateEncoder) { encoder.ints([tls, tcp, ip, frame]) }

    init(state decoder: inout StateDecoder) throws {
        let values = try decoder.ints()
        guard values.count == 4 else { throw StateDecoder.Malformed(reason: "\(values.count) layer bytes") }
        self.init()
        (tls, tcp, ip, frame) = (values[0], values[1], values[2], values[3])
    }
}

extension DirectionCost {
    /// Each overhead kind by name: a kind the reading run does not know is an error, not lost.
    public func encode(to encoder: inout StateEncoder) {
        total.encode(to: &encoder)
        let kinds = OverheadKind.all
        encoder.int(kinds.count)
        for kind in kinds {
            encoder.string(kind.name)
            self[kind].encode(to: &encoder)
        }
        encoder.ints([emptyPacketCount, retransmittedSegments, retransmittedBytes, lateCopies, forcedPackets])
    }

    public init(state decoder: inout StateDecoder) throws {
        self.init()
        total = try LayerBytes(state: &decoder)
        let kinds = OverheadKind.all
        for _ in 0..<(try decoder.count(minimumBytes: 8)) {
            let name = try decoder.string()
            guard let kind = kinds.first(where: { $0.name == name }) else {
                throw StateDecoder.Malformed(reason: "an overhead kind this version does not know: \(name)")
            }
            self[kind] = try LayerBytes(state: &decoder)
        }
        let values = try decoder.ints()
        guard values.count == 5 else { throw StateDecoder.Malformed(reason: "\(values.count) direction counts") }
        (emptyPacketCount, retransmittedSegments, retransmittedBytes) = (values[0], values[1], values[2])
        (lateCopies, forcedPackets) = (values[3], values[4])
    }
}

extension InputDiagnostics.CounterTotals {
    /// Keyed by the kind's name.
    public func encode(to encoder: inout StateEncoder) {
        encoder.string(kind.name)
        encoder.int(connections)
        encoder.ints(counts)
        for side in [client, server] {
            let names = side.keys.sorted { $0.utf8Compare($1) < 0 }
            encoder.int(names.count)
            for name in names {
                encoder.string(name)
                encoder.ints([side[name]!.frames, side[name]!.bytes])
            }
        }
    }

    public init(state decoder: inout StateDecoder) throws {
        let name = try decoder.string()
        guard let kind = ConnectionCounterKind.all.first(where: { $0.name == name }) else {
            throw StateDecoder.Malformed(reason: "a connection counter kind this version does not know: \(name)")
        }
        self.init(kind: kind)
        connections = try decoder.int()
        let values = try decoder.ints()
        guard values.count == kind.counts.count else {
            throw StateDecoder.Malformed(reason: "\(values.count) counts of \(name), not \(kind.counts.count)")
        }
        counts = values
        for side in 0..<2 {
            var units: [String: FrameTypeCount] = [:]
            for _ in 0..<(try decoder.count(minimumBytes: 8)) {
                let unit = try decoder.string()
                let pair = try decoder.ints()
                guard pair.count == 2 else { throw StateDecoder.Malformed(reason: "a unit of \(pair.count) counts") }
                units[unit] = FrameTypeCount(frames: pair[0], bytes: pair[1])
            }
            if side == 0 { client = units } else { server = units }
        }
    }
}
