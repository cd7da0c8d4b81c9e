import CNghttp3
import MessageModel

/// The QPACK decoder (RFC 9204) for the header sections one side sends, through nghttp3: fed that
/// side's encoder stream, it decodes that side's HEADERS and PUSH_PROMISE field sections. A
/// section that refers to entries the encoder stream has not brought yet is blocked and resumed
/// when they come; one that refers to entries the capture never saw (its encoder stream began
/// before the capture, or lost bytes) stays blocked: its fields are unknown, never guessed.
///
/// The dynamic table's capacity is what the *receiving* side announced
/// (SETTINGS_QPACK_MAX_TABLE_CAPACITY): the Required Insert Count of a section is encoded
/// modulo that capacity's entry count (RFC 9204 §4.5.1.1), so the decoder is made once that
/// SETTINGS is read (`configure`), or with capacity 0 (static table only) when a section needs
/// decoding first. Not thread-safe; lives on the parsing thread with its connection.
final class QPACKDecoder {
    /// The nghttp3 decoder; nil until configured or first needed.
    private var decoder: OpaquePointer?
    /// The capacity it was made with.
    private(set) var capacity = 0
    /// Encoder-stream bytes that came before the decoder was made (bounded by `maxPending`).
    private var pendingEncoder: [UInt8] = []
    /// True once encoder-stream bytes were lost (a gap, a start the capture lacks, an
    /// instruction nghttp3 rejected): inserts after that are unknown, so sections needing them
    /// stay blocked; sections whose entries all came before still decode exactly (absolute
    /// indexes do not move, and an entry is evicted only by inserts, none of which were seen).
    private(set) var encoderStreamBroken = false
    /// Sections that could not be decoded (nghttp3 rejected them).
    private(set) var errors = 0
    private let maxPending: Int
    private let maxFieldSectionBytes: Int
    /// The decoder stream nghttp3 writes (section acknowledgements): drained and dropped, since
    /// nobody reads it, so it never grows.
    private var drain: [UInt8] = []

    init(maxPendingEncoderBytes: Int, maxFieldSectionBytes: Int) {
        maxPending = maxPendingEncoderBytes
        self.maxFieldSectionBytes = maxFieldSectionBytes
    }

    deinit {
        if let decoder { nghttp3_qpack_decoder_del(decoder) }
    }

    /// The receiving side's SETTINGS: the table capacity and how many streams may block.
    func configure(capacity: Int, blockedStreams: Int) {
        if let decoder {
            // Already made for a section that came first: remade only while nothing was inserted.
            guard capacity != self.capacity, nghttp3_qpack_decoder_get_icnt(decoder) == 0 else { return }
            nghttp3_qpack_decoder_del(decoder)
            self.decoder = nil
        }
        make(capacity: capacity, blockedStreams: blockedStreams)
    }

    private func make(capacity: Int, blockedStreams: Int) {
        var made: OpaquePointer?
        // Blocked streams: a passive reader must hold every section the sender let block.
        guard nghttp3_qpack_decoder_new(&made, capacity, max(blockedStreams, 1 << 10), nghttp3_mem_default()) == 0,
            let made
        else { return }
        decoder = made
        self.capacity = capacity
        if !pendingEncoder.isEmpty {
            let pending = pendingEncoder
            pendingEncoder = []
            pending.withUnsafeBytes { readEncoder($0) }
        }
    }

    private func ensureDecoder() -> OpaquePointer? {
        if decoder == nil { make(capacity: 0, blockedStreams: 0) }
        return decoder
    }

    /// Bytes of the sender's encoder stream, in order.
    func readEncoder(_ bytes: UnsafeRawBufferPointer) {
        guard !encoderStreamBroken, !bytes.isEmpty else { return }
        guard let decoder else {
            if pendingEncoder.count + bytes.count > maxPending {
                encoderStreamBroken = true
                pendingEncoder = []
            } else {
                pendingEncoder.append(contentsOf: bytes)
            }
            return
        }
        let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let read = nghttp3_qpack_decoder_read_encoder(decoder, base, bytes.count)
        if read < 0 || Int(read) != bytes.count { encoderStreamBroken = true }
    }

    /// Encoder-stream bytes are missing: later inserts are unknown.
    func loseEncoderStream() {
        encoderStreamBroken = true
        pendingEncoder = []
    }

    /// Inserts the encoder stream brought so far.
    var insertCount: UInt64 { decoder.map { nghttp3_qpack_decoder_get_icnt($0) } ?? 0 }

    /// A field section being decoded: its bytes not yet read and nghttp3's context.
    final class Section {
        fileprivate var context: OpaquePointer?
        fileprivate var rest: [UInt8]
        fileprivate var fields: [HeaderField] = []
        fileprivate var listSize = 0

        fileprivate init(context: OpaquePointer?, bytes: [UInt8]) {
            self.context = context
            rest = bytes
        }

        deinit {
            if let context { nghttp3_qpack_stream_context_del(context) }
        }
    }

    /// What decoding a section gave.
    enum Outcome {
        /// Every field, and Σ len(name) + len(value) + 32 over them.
        case fields([HeaderField], listSize: Int)
        /// Waiting for encoder-stream inserts; `resume` it after more encoder bytes.
        case blocked(Section)
        /// nghttp3 rejected the section (or the decoder could not be made): fields unknown.
        case failed
    }

    /// Decodes the field section of a HEADERS or PUSH_PROMISE frame on `stream`.
    func decode(_ bytes: [UInt8], stream: UInt64) -> Outcome {
        guard let decoder = ensureDecoder() else { return .failed }
        var context: OpaquePointer?
        guard nghttp3_qpack_stream_context_new(&context, Int64(truncatingIfNeeded: stream & ((1 << 62) - 1)),
            nghttp3_mem_default()) == 0
        else { return .failed }
        return run(Section(context: context, bytes: bytes), decoder)
    }

    /// A blocked section again, after encoder-stream bytes came.
    func resume(_ section: Section) -> Outcome {
        guard let decoder, let context = section.context else { return .failed }
        if nghttp3_qpack_stream_context_get_ricnt(context) > nghttp3_qpack_decoder_get_icnt(decoder) {
            return .blocked(section)
        }
        return run(section, decoder)
    }

    private func run(_ section: Section, _ decoder: OpaquePointer) -> Outcome {
        var field = nghttp3_qpack_nv()
        var flags: UInt8 = 0
        var consumed = 0
        defer { drainDecoderStream(decoder) }
        let outcome: Outcome? = section.rest.withUnsafeBufferPointer { buffer -> Outcome? in
            while true {
                let base = buffer.baseAddress.map { $0 + consumed }
                // nghttp3 reads from a non-null pointer even for an empty rest.
                var empty: UInt8 = 0
                let read = withUnsafeMutablePointer(to: &empty) { emptyPointer in
                    nghttp3_qpack_decoder_read_request(
                        decoder, section.context, &field, &flags, base ?? UnsafePointer(emptyPointer),
                        buffer.count - consumed, 1)
                }
                if read < 0 { return .failed }
                consumed += Int(read)
                if flags & UInt8(NGHTTP3_QPACK_DECODE_FLAG_EMIT) != 0 {
                    let name = nghttp3_rcbuf_get_buf(field.name)
                    let value = nghttp3_rcbuf_get_buf(field.value)
                    let size = name.len &+ value.len &+ 32
                    section.listSize = section.listSize &+ size
                    if section.listSize <= maxFieldSectionBytes {
                        section.fields.append(
                            HeaderField(
                                name: Array(UnsafeBufferPointer(start: name.base, count: name.len)),
                                value: Array(UnsafeBufferPointer(start: value.base, count: value.len))))
                    }
                    nghttp3_rcbuf_decref(field.name)
                    nghttp3_rcbuf_decref(field.value)
                    if section.listSize > maxFieldSectionBytes { return .failed }
                }
                if flags & UInt8(NGHTTP3_QPACK_DECODE_FLAG_FINAL) != 0 {
                    return .fields(section.fields, listSize: section.listSize)
                }
                if flags & UInt8(NGHTTP3_QPACK_DECODE_FLAG_BLOCKED) != 0 { return nil }
                // Nothing read and nothing emitted: the section ended short.
                if read == 0 && flags == 0 { return .failed }
            }
        }
        section.rest.removeFirst(min(consumed, section.rest.count))
        if let outcome {
            if case .failed = outcome { errors += 1 }
            return outcome
        }
        return .blocked(section)
    }

    private func drainDecoderStream(_ decoder: OpaquePointer) {
        let length = nghttp3_qpack_decoder_get_decoder_streamlen(decoder)
        guard length > 0 else { return }
        if drain.count < length { drain = [UInt8](repeating: 0, count: length) }
        drain.withUnsafeMutableBufferPointer { scratch in
            let base = scratch.baseAddress!
            var buffer = nghttp3_buf(begin: base, end: base + scratch.count, pos: base, last: base)
            nghttp3_qpack_decoder_write_decoder(decoder, &buffer)
        }
    }
}
