import FuzzDriver

// libFuzzer with FuzzEntry.http2 (docs/FUZZING.md). SwiftPM binds `main` to `FuzzHTTP2_main`.
@_cdecl("FuzzHTTP2_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.http2, argc: argc, argv: argv)
}
