/// TCP sequence numbers are 32-bit and wrap (RFC 1982 serial-number arithmetic): `b` is "after" `a` when the
/// wrapped difference `b - a` is less than 2^31. Every comparison in reassembly goes through this one function,
/// so a stream that crosses 2^32 behaves exactly like one that does not.
@inline(__always)
func sequenceDistance(from a: UInt32, to b: UInt32) -> Int {
    Int(Int32(bitPattern: b &- a))
}
