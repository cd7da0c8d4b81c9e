import FuzzEntries

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzEntry.captureReader.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
