import CZlibMeter
import Foundation

/// `-[NSData gzippedData]` of the GZIP category (1.1 and later), the call seed 001's meter makes:
/// empty data and data that already starts with the gzip magic come back unchanged; anything else
/// goes through `deflateInit2(level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY)` (a gzip wrapper:
/// 10-byte header, 8-byte trailer) and `deflate(Z_FINISH)` until the stream ends.
func gzippedData(_ data: Data, level: Int32 = 6) -> Data {
    if data.isEmpty || (data.count >= 2 && data[data.startIndex] == 0x1f && data[data.startIndex + 1] == 0x8b) {
        return data
    }
    var stream = z_stream()
    // deflateInit2 is a macro: call the function it expands to.
    let rc = deflateInit2_(&stream, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY,
                           zlibVersion(), Int32(MemoryLayout<z_stream>.size))
    guard rc == Z_OK else { fatalError("deflateInit2: \(rc)") }
    defer { deflateEnd(&stream) }
    var input = [UInt8](data)
    var out = Data()
    var chunk = [UInt8](repeating: 0, count: 16384)
    input.withUnsafeMutableBufferPointer { inBuf in
        stream.next_in = inBuf.baseAddress
        stream.avail_in = uInt(inBuf.count)
        var status: Int32 = Z_OK
        while status != Z_STREAM_END {
            chunk.withUnsafeMutableBufferPointer { outBuf in
                stream.next_out = outBuf.baseAddress
                stream.avail_out = uInt(outBuf.count)
                status = deflate(&stream, Z_FINISH)
                precondition(status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR, "deflate: \(status)")
                out.append(outBuf.baseAddress!, count: outBuf.count - Int(stream.avail_out))
            }
        }
    }
    return out
}
