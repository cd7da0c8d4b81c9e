import FuzzDriver

// libFuzzer with FuzzEntry.meterLog (docs/FUZZING.md). SwiftPM binds `main` to `FuzzMeterLog_main`.
@_cdecl("FuzzMeterLog_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(.meterLog, argc: argc, argv: argv)
}
