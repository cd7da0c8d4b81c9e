import FuzzEntries

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzEntry.http1.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
