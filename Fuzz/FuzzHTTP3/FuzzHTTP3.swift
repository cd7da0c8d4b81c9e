import FuzzDriver

// libFuzzer with FuzzEntry.http3 (docs/FUZZING.md). SwiftPM binds `main` to `FuzzHTTP3_main`.
@_cdecl("FuzzHTTP3_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.http3, argc: argc, argv: argv)
}
