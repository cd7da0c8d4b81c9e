import FuzzEntries

/// libFuzzer's driver (compiler-rt, linked by `-sanitize=fuzzer`): parses the flags, then
/// calls `test` with each input.
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The current target's entry, for the C callback (which cannot capture).
nonisolated(unsafe) private var currentEntry = FuzzEntry.captureReader

/// Runs libFuzzer over `entry`. Each fuzz executable's entry point calls this: SwiftPM links an
/// executable target with `main` bound to `<Target>_main` on Linux, which leaves libFuzzer's
/// own `main` unused, so the executable starts the driver itself.
public func runLibFuzzer(
    _ entry: FuzzEntry, argc: Int32,
    argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    currentEntry = entry
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in
        currentEntry.run(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
}
