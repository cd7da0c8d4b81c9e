import FuzzDriver

// libFuzzer with FuzzEntry.quic (docs/FUZZING.md). SwiftPM binds `main` to `FuzzQUIC_main`.
@_cdecl("FuzzQUIC_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.quic, argc: argc, argv: argv)
}
