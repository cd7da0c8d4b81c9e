import CaptureIO
import MessageModel

// Decoded field sections onto messages: pseudo-fields make the method, URL and status, the
// rest are the fields the app sees (as HTTP/2's blocks do, docs/METERING.md §2a and §2d).

/// A head's fields (nil: unknown) onto the message. `listSize` is Σ len(name) + len(value) + 32.
func apply(_ fields: [HeaderField]?, listSize: Int, to message: inout CapturedMessage) {
    let kind = message.kind
    guard let fields else {
        message.anomalies.insert(.qpackStateUnknown)
        message.message.protocolFacts.headerListSize = nil
        message.message.protocolFacts.headFieldsKnown = false
        message.message.protocolFacts.unknownHeadParts = HeadParts.all(kind)
        return
    }
    var scheme: [UInt8]?
    var authority: [UInt8]?
    var path: [UInt8]?
    message.message.fields.reserveCapacity(fields.count)
    for field in fields {
        guard field.name.first == UInt8(ascii: ":") else {
            message.message.fields.append(field)
            continue
        }
        switch field.name {
        case Array(":method".utf8): message.method = String(decoding: field.value, as: UTF8.self)
        case Array(":scheme".utf8): scheme = field.value
        case Array(":authority".utf8): authority = field.value
        case Array(":path".utf8): path = field.value
        case Array(":status".utf8): message.status = Int(String(decoding: field.value, as: UTF8.self))
        default: break
        }
    }
    if let total = message.message.protocolFacts.headerListSize {
        message.message.protocolFacts.headerListSize = saturatingSum(total, listSize)
    }
    if kind == .request {
        // The URL the app asked for: absolute when scheme and authority are known.
        if let scheme, let authority {
            message.target = scheme + Array("://".utf8) + authority + (path ?? [])
        } else {
            message.target = path ?? authority ?? []
        }
    }
}

/// A second section on a message: its trailers (nil: unknown, the head stays as it was).
func applyTrailers(_ fields: [HeaderField]?, listSize: Int, to message: inout CapturedMessage) {
    guard let fields else {
        message.anomalies.insert(.qpackStateUnknown)
        message.message.protocolFacts.headerListSize = nil
        return
    }
    if let total = message.message.protocolFacts.headerListSize {
        message.message.protocolFacts.headerListSize = saturatingSum(total, listSize)
    }
    for field in fields where field.name.first != UInt8(ascii: ":") { message.message.trailers.append(field) }
}
