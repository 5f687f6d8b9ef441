/// The protocol layer a decoding problem was found in.
public enum Layer: String, Sendable, Hashable {
    case link, vlan, ipv4, ipv6, ipv6Extension = "ipv6-extension", tcp, udp, icmp, icmpv6, arp
    // Tunnels and encapsulations (see Encapsulation.swift); `encapsulation` is the nesting-depth limit.
    case gre, erspan, vxlan, geneve, mpls, pppoe, innerEthernet = "inner-ethernet", encapsulation
}

/// Why a packet could not be decoded further. Says where: layer, byte offset in the packet, needed and actual length.
public struct DecodingError: Error, Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// The header needs more bytes than were captured (snap length) or than the packet has.
        case truncated
        /// A length or version field holds a value that cannot be right.
        case malformed(String)
    }

    public var layer: Layer
    public var kind: Kind
    /// Byte offset of the layer's header from the start of the captured frame.
    public var offset: Int
    public var needed: Int
    public var actual: Int

    public init(layer: Layer, kind: Kind, offset: Int, needed: Int, actual: Int) {
        self.layer = layer
        self.kind = kind
        self.offset = offset
        self.needed = needed
        self.actual = actual
    }
}

extension DecodingError: CustomStringConvertible {
    public var description: String {
        switch kind {
        case .truncated:
            return "\(layer.rawValue) header truncated at offset \(offset): needs \(needed) bytes, has \(actual)"
        case .malformed(let why):
            return "\(layer.rawValue) header malformed at offset \(offset): \(why) (needs \(needed) bytes, has \(actual))"
        }
    }
}
