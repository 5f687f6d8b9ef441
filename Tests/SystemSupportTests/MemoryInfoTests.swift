import Testing
@testable import SystemSupport

/// `-B` is refused above MemAvailable (the capture ring is unswappable kernel memory); the figure comes from here.
@Suite struct MemoryInfoTests {
    @Test func readsMemAvailableInBytes() {
        let text = "MemTotal:       24576000 kB\nMemFree:        20000000 kB\nMemAvailable:   22222222 kB\nBuffers: 1 kB\n"
        #expect(MemoryInfo.availableBytes(meminfo: text) == 22_222_222 * 1024)
    }

    @Test func missingOrMalformedIsNil() {
        #expect(MemoryInfo.availableBytes(meminfo: "MemTotal: 1 kB\n") == nil)
        #expect(MemoryInfo.availableBytes(meminfo: "MemAvailable: lots\n") == nil)
    }

    @Test func thisMachineHasAFigure() {
        let available = MemoryInfo.availableBytes()
        #expect(available != nil && available! > 0)
    }
}
