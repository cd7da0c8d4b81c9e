import FuzzDriver

// libFuzzer with FuzzEntry.partFigures (docs/FUZZING.md). SwiftPM binds `main` to `FuzzPartFigures_main`.
@_cdecl("FuzzPartFigures_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.partFigures, argc: argc, argv: argv)
}
