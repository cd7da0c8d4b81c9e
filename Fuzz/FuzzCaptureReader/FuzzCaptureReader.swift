import FuzzDriver

// libFuzzer with FuzzEntry.captureReader (docs/FUZZING.md). SwiftPM binds `main` to `FuzzCaptureReader_main`.
@_cdecl("FuzzCaptureReader_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.captureReader, argc: argc, argv: argv)
}
