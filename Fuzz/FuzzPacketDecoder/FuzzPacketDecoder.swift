import FuzzDriver

// libFuzzer with FuzzEntry.packetDecoder (docs/FUZZING.md). SwiftPM binds `main` to `FuzzPacketDecoder_main`.
@_cdecl("FuzzPacketDecoder_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.packetDecoder, argc: argc, argv: argv)
}
