import Foundation

/// Maps data values to pixels along one axis, and says where its ticks go.
protocol ChartScale {
    func position(_ value: Double) -> Double
    /// Tick values with their labels, inside the domain.
    var ticks: [(value: Double, label: String)] { get }
}

/// `domain` onto `range` linearly; ticks at 1, 2 or 5 times a power of ten.
struct LinearScale: ChartScale {
    var domain: (Double, Double)
    var range: (Double, Double)
    var format: (Double) -> String = ChartNumber.compact

    func position(_ value: Double) -> Double {
        let span = domain.1 - domain.0
        guard span > 0 else { return range.0 }
        return range.0 + (value - domain.0) / span * (range.1 - range.0)
    }

    var ticks: [(value: Double, label: String)] {
        let step = Self.niceStep(domain.1 - domain.0, count: 5)
        guard step > 0 else { return [(domain.0, format(domain.0))] }
        var values: [(Double, String)] = []
        var value = (domain.0 / step).rounded(.up) * step
        while value <= domain.1 + step * 1e-9, values.count < 20 {
            values.append((value == 0 ? 0 : value, format(value)))
            value += step
        }
        return values
    }

    /// The 1-2-5 step giving about `count` intervals over `span`.
    static func niceStep(_ span: Double, count: Int) -> Double {
        guard span > 0, span.isFinite else { return 0 }
        let raw = span / Double(count)
        let magnitude = pow(10, floor(log10(raw)))
        for factor in [1.0, 2, 5, 10] where factor * magnitude >= raw { return factor * magnitude }
        return 10 * magnitude
    }

    /// The domain widened to whole steps, so the axis ends on a tick.
    static func nice(_ low: Double, _ high: Double, count: Int = 5) -> (Double, Double) {
        let step = niceStep(high - low, count: count)
        guard step > 0 else { return (low, low + 1) }
        return ((low / step).rounded(.down) * step, (high / step).rounded(.up) * step)
    }
}

/// Powers of ten onto `range`; values below 1 (an estimate of 0 bytes) sit on a band at the
/// axis' start, labeled `0`.
struct LogScale: ChartScale {
    /// Decades shown: 10^low ... 10^high.
    var decades: (Int, Int)
    var range: (Double, Double)
    /// Pixels kept at the start of the range for the zero band.
    var zeroBand: Double = 22

    func position(_ value: Double) -> Double {
        let direction: Double = range.1 >= range.0 ? 1 : -1
        guard value >= 1 else { return range.0 }
        let start = range.0 + direction * zeroBand
        let span = Double(decades.1 - decades.0)
        guard span > 0 else { return start }
        let fraction = (log10(value) - Double(decades.0)) / span
        return start + fraction * (range.1 - start)
    }

    var ticks: [(value: Double, label: String)] {
        [(0, "0")] + (decades.0...decades.1).map { (pow(10, Double($0)), ChartNumber.compact(pow(10, Double($0)))) }
    }

    /// The decades holding every value ≥ 1 of `values` (at least one decade).
    static func decades(covering maximum: Double) -> (Int, Int) {
        let high = maximum > 1 ? Int(ceil(log10(maximum))) : 1
        return (0, max(high, 1))
    }
}

/// A symmetric log scale for signed byte errors: sign(x) · log10(1 + |x|), so that errors of a
/// few bytes and of megabytes fit on one axis; zero in the middle.
struct SymmetricLogScale: ChartScale {
    /// The largest |value| shown, as a power of ten.
    var decades: Int
    var range: (Double, Double)

    private static func transform(_ value: Double) -> Double {
        (value < 0 ? -1 : 1) * log10(1 + abs(value))
    }

    func position(_ value: Double) -> Double {
        let limit = Double(max(decades, 1))
        let fraction = (Self.transform(value) + limit) / (2 * limit)
        return range.0 + min(max(fraction, 0), 1) * (range.1 - range.0)
    }

    var ticks: [(value: Double, label: String)] {
        let limit = max(decades, 1)
        // Every decade when few, else every other one, so labels do not collide.
        let stride = limit > 4 ? 2 : 1
        var values: [(Double, String)] = [(0, "0")]
        for power in Swift.stride(from: stride, through: limit, by: stride) {
            let value = pow(10, Double(power))
            values.append((value, "+" + ChartNumber.compact(value)))
            values.insert((-value, "-" + ChartNumber.compact(value)), at: 0)
        }
        return values
    }

    static func decades(covering maximum: Double) -> Int {
        maximum > 1 ? max(Int(ceil(log10(maximum + 1))), 1) : 1
    }
}

/// Numbers on axes and in tooltips.
enum ChartNumber {
    /// `0`, `950`, `1.5k`, `12k`, `3M`, `1.2G`: short, for tick labels (bytes, counts).
    static func compact(_ value: Double) -> String {
        let magnitude = abs(value)
        let sign = value < 0 ? "-" : ""
        for (divisor, suffix) in [(1e9, "G"), (1e6, "M"), (1e3, "k")] where magnitude >= divisor {
            let scaled = magnitude / divisor
            let text =
                scaled >= 10 || scaled == scaled.rounded()
                ? String(Int(scaled.rounded())) : FixedDecimal.format(scaled, decimals: 1)
            return sign + text + suffix
        }
        if magnitude == magnitude.rounded() { return sign + String(Int(magnitude)) }
        return sign + FixedDecimal.format(magnitude, decimals: 2)
    }
}
