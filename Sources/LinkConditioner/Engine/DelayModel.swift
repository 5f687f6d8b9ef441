#if canImport(Glibc)
import Glibc
#endif

/// What one direction's engine queue does to each packet, as netem would: drop it (loss), let it go at once
/// (reordering: sent ahead of the delayed ones), or hold it for delay ± jitter drawn from the distribution.
/// With a correlation ρ, each draw depends on the one before while keeping its rate and shape: a loss or reorder
/// decision repeats the last with probability ρ (else is drawn afresh), and the jitter follows an AR(1) process in
/// normal space (z = ρ·z' + √(1-ρ²)·ε) mapped back to a uniform draw. netem's `get_crandom` averages the draw
/// with the last one instead, which narrows the distribution and so lowers the loss rate it was given (25%
/// correlation turns 10% loss into about 2%): here 10% stays 10%.
struct DelayModel: Sendable, Equatable {
    enum Decision: Equatable {
        case drop
        case now
        case after(nanoseconds: UInt64)
    }

    var delayNanoseconds: Double
    var jitterNanoseconds: Double
    var distribution: LinkSettings.JitterDistribution?
    /// 0...1, applied to the jitter, loss and reorder draws alike (as the profile's one `correlationPercent`).
    var correlation: Double
    /// 0...1; loss decided here (the nftables rules drop uncorrelated loss before packets reach the queue).
    var loss: Double
    var reorder: Double

    init(settings: LinkSettings, extraDelayMicroseconds: UInt64 = 0, lossInEngine: Bool) {
        delayNanoseconds = Double(settings.delayMicroseconds + extraDelayMicroseconds) * 1000
        jitterNanoseconds = Double(settings.jitterMicroseconds) * 1000
        distribution = settings.jitterDistribution
        correlation = settings.correlationPercent / 100
        loss = lossInEngine ? settings.lossPercent / 100 : 0
        reorder = settings.reorderPercent / 100
    }

    /// The state the draws carry from one packet to the next.
    struct State {
        var random = SplitMix64()
        var jitterZ = 0.0
        var lost = false
        var reordered = false
    }

    func decide(_ state: inout State) -> Decision {
        if loss > 0, Self.correlated(&state.lost, loss, correlation, &state.random) { return .drop }
        if reorder > 0, Self.correlated(&state.reordered, reorder, correlation, &state.random) { return .now }
        var delay = delayNanoseconds
        if jitterNanoseconds > 0 {
            let u: Double
            if correlation > 0 {
                let fresh = Self.inverseNormal(state.random.unit())
                state.jitterZ = correlation * state.jitterZ + (1 - correlation * correlation).squareRoot() * fresh
                u = 0.5 * erfc(-state.jitterZ / 2.0.squareRoot())
            } else {
                u = state.random.unit()
            }
            delay += jitterNanoseconds * Self.standardised(u, distribution, second: state.random.unit())
        }
        return delay <= 0 ? .now : .after(nanoseconds: UInt64(delay))
    }

    /// A yes/no with probability `p` that repeats the last answer with probability `correlation`.
    static func correlated(_ last: inout Bool, _ p: Double, _ correlation: Double, _ random: inout SplitMix64) -> Bool {
        if correlation > 0, random.unit() < correlation { return last }
        last = random.unit() < p
        return last
    }

    /// A draw of the jitter's shape, in units of the jitter: uniform over -1...1 (netem without a distribution),
    /// else mean 0 and standard deviation 1 (netem's tables are scaled so the jitter is the deviation).
    static func standardised(_ u: Double, _ distribution: LinkSettings.JitterDistribution?, second: Double) -> Double {
        switch distribution {
        case nil: return 2 * u - 1
        case .normal: return inverseNormal(u)
        case .pareto: return pareto(u)
        case .paretonormal:
            // netem's paretonormal table: a quarter normal and three quarters pareto, rescaled to deviation 1.
            return (0.25 * inverseNormal(second) + 0.75 * pareto(u)) / (0.0625 + 0.5625).squareRoot()
        }
    }

    /// Pareto with shape 3 (netem's), shifted and scaled to mean 0 and deviation 1 (mean 1.5, deviation √0.75).
    static func pareto(_ u: Double) -> Double {
        (pow(1 - min(u, 0.999_999), -1.0 / 3) - 1.5) / 0.75.squareRoot()
    }

    private static let aCoefficients: [Double] = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00]
    private static let bCoefficients: [Double] = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01]
    private static let cCoefficients: [Double] = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00]
    private static let dCoefficients: [Double] = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
    /// The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9).
    static func inverseNormal(_ p: Double) -> Double {
        let p = min(max(p, 1e-12), 1 - 1e-12)
        if p < 0.02425 {
            let q = (-2 * log(p)).squareRoot()
            return (((((cCoefficients[0] * q + cCoefficients[1]) * q + cCoefficients[2]) * q + cCoefficients[3]) * q + cCoefficients[4]) * q + cCoefficients[5])
                / ((((dCoefficients[0] * q + dCoefficients[1]) * q + dCoefficients[2]) * q + dCoefficients[3]) * q + 1)
        }
        if p > 1 - 0.02425 {
            let q = (-2 * log(1 - p)).squareRoot()
            return -(((((cCoefficients[0] * q + cCoefficients[1]) * q + cCoefficients[2]) * q + cCoefficients[3]) * q + cCoefficients[4]) * q + cCoefficients[5])
                / ((((dCoefficients[0] * q + dCoefficients[1]) * q + dCoefficients[2]) * q + dCoefficients[3]) * q + 1)
        }
        let q = p - 0.5
        let r = q * q
        return (((((aCoefficients[0] * r + aCoefficients[1]) * r + aCoefficients[2]) * r + aCoefficients[3]) * r + aCoefficients[4]) * r + aCoefficients[5]) * q
            / (((((bCoefficients[0] * r + bCoefficients[1]) * r + bCoefficients[2]) * r + bCoefficients[3]) * r + bCoefficients[4]) * r + 1)
    }
}

/// A small fast generator for per-packet draws (Vigna's SplitMix64), seeded from the system's randomness.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64 = UInt64.random(in: 0...UInt64.max)) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }
}
