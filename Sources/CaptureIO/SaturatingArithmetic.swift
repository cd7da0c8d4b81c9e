// The one saturating add of the pipeline: counts and sums read from input clamp instead of
// trapping. Here, the lowest module, so that every stage (TLS and HTTP/2 included) shares it.

/// `a + b`, clamped at the end of `T` it overflows towards instead of trapping (`.max` for
/// counts, which are never negative; `.min` only when both operands are negative).
/// Inlined and specialized at each call site: per-packet and per-frame paths call it.
@inlinable @inline(__always)
public func saturatingSum<T: FixedWidthInteger>(_ a: T, _ b: T) -> T {
    let (sum, overflow) = a.addingReportingOverflow(b)
    return overflow ? (b < 0 ? .min : .max) : sum
}
