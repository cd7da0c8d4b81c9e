import FuzzDriver

// libFuzzer with FuzzEntry.contentDecoder (docs/FUZZING.md). SwiftPM binds `main` to `FuzzContentDecoder_main`.
@_cdecl("FuzzContentDecoder_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.contentDecoder, argc: argc, argv: argv)
}
