/// One content coding being removed: a streaming decompressor that turns input into output
/// pieces written to a scratch buffer, never holding either whole.
protocol DecodingStage: AnyObject {
    /// The coding's name, for failure texts.
    var name: String { get }
    /// The coded stream has ended (bytes after the end are ignored).
    var finished: Bool { get }
    /// Any input has reached the decompressor (tells "empty" from "cut short").
    var consumedAny: Bool { get }
    /// Decodes `input`, handing each piece of output to `emit` (borrowed until it returns).
    /// `emit` returns false to stop at once: then the rest of `input` is dropped, so a bomb
    /// over the limits costs no more decompression work. Returns an error text when the data
    /// is damaged.
    func decode(
        _ input: UnsafeRawBufferPointer, scratch: UnsafeMutableRawBufferPointer,
        emit: (UnsafeRawBufferPointer) -> Bool
    ) -> String?
    /// Frees the decompressor; idempotent.
    func release()
}
