import FuzzDriver

// libFuzzer with FuzzEntry.charlesReader (docs/FUZZING.md). SwiftPM binds `main` to `FuzzCharlesReader_main`.
@_cdecl("FuzzCharlesReader_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.charlesReader, argc: argc, argv: argv)
}
