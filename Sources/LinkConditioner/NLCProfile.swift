import Foundation

/// One Network Link Conditioner profile as NLC stores it in a property list
/// (`com.apple.network.prefPaneSimulate.plist`, or an exported profile dictionary).
///
/// Zero means "unchanged" for every number, as in NLC; bandwidths keep NLC's value-and-unit form so that an
/// export writes back what was imported.
public struct NLCProfile: Equatable, Sendable {
    public enum BandwidthUnit: Int, Sendable { case kbps = 0, mbps = 1 }

    public struct Direction: Equatable, Sendable {
        public var bandwidth: Double = 0
        public var bandwidthUnit: BandwidthUnit = .kbps
        /// Percent, 0...100.
        public var packetLossRatio: Double = 0
        /// Milliseconds.
        public var delay: Double = 0

        public init(bandwidth: Double = 0, bandwidthUnit: BandwidthUnit = .kbps, packetLossRatio: Double = 0,
                    delay: Double = 0) {
            self.bandwidth = bandwidth
            self.bandwidthUnit = bandwidthUnit
            self.packetLossRatio = packetLossRatio
            self.delay = delay
        }

        /// Bits per second; 0 when unchanged.
        public var bitsPerSecond: Double { bandwidth * (bandwidthUnit == .mbps ? 1_000_000 : 1_000) }

        /// NLC's form for a rate: whole Mbps when exact, else Kbps.
        public static func bandwidth(bitsPerSecond: Double) -> (Double, BandwidthUnit) {
            if bitsPerSecond >= 1_000_000, bitsPerSecond.truncatingRemainder(dividingBy: 1_000_000) == 0 {
                return (bitsPerSecond / 1_000_000, .mbps)
            }
            return (bitsPerSecond / 1_000, .kbps)
        }
    }

    public var name: String
    public var downlink = Direction()
    public var uplink = Direction()
    /// Milliseconds added to DNS queries.
    public var dnsDelay: Double = 0
    public var excludeLoopback: Bool = true

    public init(name: String, downlink: Direction = Direction(), uplink: Direction = Direction(),
                dnsDelay: Double = 0, excludeLoopback: Bool = true) {
        self.name = name
        self.downlink = downlink
        self.uplink = uplink
        self.dnsDelay = dnsDelay
        self.excludeLoopback = excludeLoopback
    }
}

public struct NLCFormatError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var message: String
    public var description: String { "\(file): \(message)" }
}

/// Reads and writes NLC property lists.
///
/// Accepted shapes: NLC's preferences file (`{Profiles = {NAME = {...}}}`, other top-level keys ignored), a
/// dictionary of profile dictionaries, an array of profile dictionaries each with a `Name`, or a single
/// profile dictionary (named after the file). XML and binary plists alike.
public enum NLCPropertyList {
    static let directionKeys = ["Bandwidth", "BandwidthUnit", "PacketLossRatio", "Delay"]
    public static let profileKeys: Set<String> = Set(["Downlink", "Uplink"].flatMap { prefix in
        directionKeys.map { prefix + $0 }
    } + ["DNSDelayValue", "ExcludeLoopback"])

    public static func read(contentsOf url: URL) throws -> [NLCProfile] {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw NLCFormatError(file: url.path, message: "cannot read: \(systemReason(error))")
        }
        return try read(data, file: url.path, defaultName: url.deletingPathExtension().lastPathComponent)
    }

    public static func read(_ data: Data, file: String, defaultName: String) throws -> [NLCProfile] {
        let root: Any
        do { root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil) } catch {
            throw NLCFormatError(file: file, message: "not a property list (\(error.localizedDescription)); "
                                 + "expected an XML or binary plist of NLC profile dictionaries")
        }
        var profiles: [NLCProfile] = []
        if let array = root as? [Any] {
            for (index, item) in array.enumerated() {
                guard let dictionary = item as? [String: Any] else {
                    throw NLCFormatError(file: file, message: "item \(index) is not a dictionary")
                }
                guard let name = dictionary["Name"] as? String, !name.isEmpty else {
                    throw NLCFormatError(file: file, message: "item \(index) has no Name string")
                }
                profiles.append(try profile(dictionary, name: name, file: file))
            }
        } else if let dictionary = root as? [String: Any] {
            if let nested = dictionary["Profiles"] as? [String: Any] {
                profiles = try profilesByName(nested, file: file)
            } else if dictionary.keys.contains(where: profileKeys.contains) {
                let name = (dictionary["Name"] as? String) ?? defaultName
                profiles = [try profile(dictionary, name: name, file: file)]
            } else {
                profiles = try profilesByName(dictionary, file: file)
            }
        } else {
            throw NLCFormatError(file: file, message: "top level is neither a dictionary nor an array")
        }
        if profiles.isEmpty {
            throw NLCFormatError(file: file, message: "no profile dictionaries found (expected keys such as "
                                 + "DownlinkBandwidth, UplinkDelay, DNSDelayValue)")
        }
        return profiles
    }

    private static func profilesByName(_ dictionary: [String: Any], file: String) throws -> [NLCProfile] {
        try dictionary.keys.sorted().compactMap { name in
            guard let entry = dictionary[name] as? [String: Any] else { return nil }
            guard entry.keys.contains(where: profileKeys.contains) else { return nil }
            return try profile(entry, name: name, file: file)
        }
    }

    static func profile(_ dictionary: [String: Any], name: String, file: String) throws -> NLCProfile {
        func number(_ key: String, range: ClosedRange<Double>) throws -> Double {
            guard let value = dictionary[key] else { return 0 }
            let number: Double
            if let value = value as? NSNumber, !(value is Bool) || key == "ExcludeLoopback" {
                number = value.doubleValue
            } else if let value = value as? Double {
                number = value
            } else if let value = value as? Int {
                number = Double(value)
            } else {
                throw NLCFormatError(file: file, message: "profile '\(name)': \(key) must be a number, got \(value)")
            }
            guard number.isFinite, range.contains(number) else {
                throw NLCFormatError(file: file, message: "profile '\(name)': \(key) = \(number) is out of range "
                                     + "(expected \(Int(range.lowerBound))...\(Int(range.upperBound)))")
            }
            return number
        }
        func direction(_ prefix: String) throws -> NLCProfile.Direction {
            let unitValue = try number(prefix + "BandwidthUnit", range: 0...1)
            guard unitValue == unitValue.rounded(), let unit = NLCProfile.BandwidthUnit(rawValue: Int(unitValue)) else {
                throw NLCFormatError(file: file, message: "profile '\(name)': \(prefix)BandwidthUnit must be 0 (Kbps) or 1 (Mbps)")
            }
            return NLCProfile.Direction(
                bandwidth: try number(prefix + "Bandwidth", range: 0...100_000_000),
                bandwidthUnit: unit,
                packetLossRatio: try number(prefix + "PacketLossRatio", range: 0...100),
                delay: try number(prefix + "Delay", range: 0...3_600_000))
        }
        var excludeLoopback = true
        if let value = dictionary["ExcludeLoopback"] {
            if let flag = value as? Bool { excludeLoopback = flag }
            else if let flag = value as? NSNumber { excludeLoopback = flag.intValue != 0 }
            else {
                throw NLCFormatError(file: file, message: "profile '\(name)': ExcludeLoopback must be a boolean")
            }
        }
        return NLCProfile(name: name, downlink: try direction("Downlink"), uplink: try direction("Uplink"),
                          dnsDelay: try number("DNSDelayValue", range: 0...3_600_000),
                          excludeLoopback: excludeLoopback)
    }

    /// The dictionary NLC stores for `profile`: integers where the value is whole, as NLC writes them.
    public static func dictionary(for profile: NLCProfile) -> [String: Any] {
        func value(_ number: Double) -> Any { number == number.rounded() && abs(number) < 1e15 ? Int(number) as Any : number as Any }
        var result: [String: Any] = ["DNSDelayValue": value(profile.dnsDelay), "ExcludeLoopback": profile.excludeLoopback]
        for (prefix, direction) in [("Downlink", profile.downlink), ("Uplink", profile.uplink)] {
            result[prefix + "Bandwidth"] = value(direction.bandwidth)
            result[prefix + "BandwidthUnit"] = direction.bandwidthUnit.rawValue
            result[prefix + "PacketLossRatio"] = direction.packetLossRatio // NLC stores a real
            result[prefix + "Delay"] = value(direction.delay)
        }
        return result
    }

    /// An XML plist in NLC's preferences shape: `{Profiles = {NAME = {...}, ...}}`.
    public static func write(_ profiles: [NLCProfile]) throws -> Data {
        var byName: [String: Any] = [:]
        for profile in profiles { byName[profile.name] = dictionary(for: profile) }
        return try PropertyListSerialization.data(fromPropertyList: ["Profiles": byName], format: .xml, options: 0)
    }
}
