import FuzzDriver

// libFuzzer with FuzzEntry.tls (docs/FUZZING.md). SwiftPM binds `main` to `FuzzTLS_main`.
@_cdecl("FuzzTLS_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.tls, argc: argc, argv: argv)
}
