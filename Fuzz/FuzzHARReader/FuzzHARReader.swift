import FuzzDriver

// libFuzzer with FuzzEntry.harReader (docs/FUZZING.md). SwiftPM binds `main` to `FuzzHARReader_main`.
@_cdecl("FuzzHARReader_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.harReader, argc: argc, argv: argv)
}
