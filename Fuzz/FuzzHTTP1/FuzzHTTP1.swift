import FuzzDriver

// libFuzzer with FuzzEntry.http1 (docs/FUZZING.md). SwiftPM binds `main` to `FuzzHTTP1_main`.
@_cdecl("FuzzHTTP1_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.http1, argc: argc, argv: argv)
}
