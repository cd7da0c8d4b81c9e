import FuzzDriver

// libFuzzer with FuzzEntry.tcpAssembler (docs/FUZZING.md). SwiftPM binds `main` to `FuzzTCPAssembler_main`.
@_cdecl("FuzzTCPAssembler_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.tcpAssembler, argc: argc, argv: argv)
}
