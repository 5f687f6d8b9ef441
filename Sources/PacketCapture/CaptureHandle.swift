internal import CPcap
import PacketDecoding
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One captured frame, lent to the loop body. `bytes` is libpcap's buffer: valid only during the call.
public struct CapturedPacket {
    /// 1-based position in the capture.
    public var index: Int
    public var timestamp: Timestamp
    public var capturedLength: Int { bytes.count }
    public var originalLength: Int
    public let bytes: UnsafeRawBufferPointer

    public init(index: Int, timestamp: Timestamp, originalLength: Int, bytes: UnsafeRawBufferPointer) {
        self.index = index
        self.timestamp = timestamp
        self.originalLength = originalLength
        self.bytes = bytes
    }
}

/// Counts libpcap keeps for a live capture.
public struct CaptureStatistics: Sendable, Hashable {
    /// Packets the filter accepted (tcpdump's "received by filter").
    public var receivedByFilter: UInt64
    /// Packets the kernel dropped for lack of buffer space.
    public var droppedByKernel: UInt64
    /// Packets the interface or driver dropped.
    public var droppedByInterface: UInt64
}

/// Settings for a live capture.
public struct LiveOptions: Sendable {
    public var snapshotLength: Int = 262_144
    public var promiscuous: Bool = true
    /// Deliver each packet as it arrives rather than when the kernel buffer block fills (for interactive use).
    public var immediate: Bool = false
    /// Kernel buffer size in bytes, or nil for libpcap's default.
    public var bufferSize: Int? = nil
    /// How long the kernel may hold packets before delivering a partly filled block.
    public var timeoutMilliseconds: Int = 200
    /// `-Q`: which packets to keep by direction (nil keeps both, libpcap's default).
    public var direction: CaptureDirection? = nil
    /// `-j`: a timestamp source by libpcap name (`host`, `adapter`, ...).
    public var timestampType: String? = nil
    /// `-y`: a link-layer header type by libpcap name (`EN10MB`, `LINUX_SLL2`, ...).
    public var dataLinkName: String? = nil
    public init() {}
}

/// tcpdump's `-Q in|out|inout`.
public enum CaptureDirection: String, Sendable, CaseIterable {
    case incoming = "in", outgoing = "out", both = "inout"
}

/// Owns one libpcap handle, live or offline. Closed when the handle goes away.
///
/// Use it from one thread; only `stop()` may be called from another (a signal handler's queue, say).
public final class CaptureHandle: @unchecked Sendable {
    private let pcap: OpaquePointer
    /// What was opened: a path, `-`, or an interface name.
    public let source: String
    public let isLive: Bool
    public let linkType: LinkType
    private let stopRequested = Atomic<Bool>(false)
    /// Classic pcap files have a 24-byte header and 16-byte records, so offsets can be counted even on a pipe.
    private let isClassicPcap: Bool
    public private(set) var packetsRead = 0
    /// Whether `makeWriter` writes nanosecond timestamps: microseconds for a microsecond pcap (its magic) and a live
    /// capture, as tcpdump writes them; nanoseconds for a nanosecond pcap, and for pcapng or a pipe, whose
    /// resolution is not known before reading, so nothing read is lost; set by `--time-stamp-precision nano`.
    /// Packets are always read in nanoseconds.
    public var savesNanoseconds: Bool
    /// The stdio buffer of a file we opened ourselves; freed after pcap_close has closed the file.
    private let fileBuffer: UnsafeMutableRawPointer?

    private init(pcap: OpaquePointer, source: String, isLive: Bool, fileBuffer: UnsafeMutableRawPointer? = nil,
                 fileIsNanosecond: Bool = false) {
        self.pcap = pcap
        self.savesNanoseconds = fileIsNanosecond
        self.source = source
        self.isLive = isLive
        self.fileBuffer = fileBuffer
        self.linkType = LinkType(rawValue: pcap_datalink(pcap))
        self.isClassicPcap = !isLive && pcap_major_version(pcap) == 2
    }

    deinit {
        pcap_close(pcap)
        fileBuffer?.deallocate()
    }

    /// stdio's default buffer is one file-system block (4 KiB), so reading a large capture costs one read(2)
    /// per 4 KiB; a 1 MiB buffer makes that 256 times fewer system calls.
    private static let fileBufferSize = 1 << 20

    /// Opens a pcap or pcapng file; `-` reads standard input.
    public static func openOffline(_ path: String) throws(CaptureError) -> CaptureHandle {
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
        let precision = UInt32(PCAP_TSTAMP_PRECISION_NANO)
        if path == "-" {
            guard let pcap = pcap_open_offline_with_tstamp_precision(path, precision, &errorBuffer) else {
                throw .openFailed(source: path, message: string(errorBuffer))
            }
            return CaptureHandle(pcap: pcap, source: path, isLive: false, fileIsNanosecond: true)
        }
        // What pcap_open_offline does, plus a large stdio buffer set before the first read.
        guard let file = fopen(path, "rb") else {
            throw .openFailed(source: path, message: "\(path): \(String(cString: strerror(errno)))")
        }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: fileBufferSize, alignment: 64)
        setvbuf(file, buffer.assumingMemoryBound(to: CChar.self), _IOFBF, fileBufferSize)
        // The magic, read without moving the stream (pread fails harmlessly on a pipe).
        var magic: UInt32 = 0
        let microsecond = pread(fileno(file), &magic, 4, 0) == 4 && (magic == 0xa1b2_c3d4 || magic == 0xd4c3_b2a1)
        guard let pcap = pcap_fopen_offline_with_tstamp_precision(file, precision, &errorBuffer) else {
            fclose(file)
            buffer.deallocate()
            throw .openFailed(source: path, message: string(errorBuffer))
        }
        return CaptureHandle(pcap: pcap, source: path, isLive: false, fileBuffer: buffer, fileIsNanosecond: !microsecond)
    }

    /// Opens and activates a live capture on `interface` (`any` for all).
    public static func openLive(_ interface: String, options: LiveOptions = LiveOptions()) throws(CaptureError) -> CaptureHandle {
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
        guard let pcap = pcap_create(interface, &errorBuffer) else {
            throw .liveFailed(interface: interface, message: string(errorBuffer))
        }
        pcap_set_snaplen(pcap, Int32(clamping: options.snapshotLength))
        pcap_set_promisc(pcap, options.promiscuous ? 1 : 0)
        pcap_set_timeout(pcap, Int32(clamping: options.timeoutMilliseconds))
        pcap_set_immediate_mode(pcap, options.immediate ? 1 : 0)
        pcap_set_tstamp_precision(pcap, Int32(PCAP_TSTAMP_PRECISION_NANO))
        if let size = options.bufferSize { pcap_set_buffer_size(pcap, Int32(clamping: size)) }
        if let name = options.timestampType {
            let value = pcap_tstamp_type_name_to_val(name)
            guard value >= 0 else {
                pcap_close(pcap)
                throw .liveFailed(interface: interface, message: "invalid time stamp type \(name) (see capture -J -i \(interface))")
            }
            let result = pcap_set_tstamp_type(pcap, value)
            guard result == 0 else {
                pcap_close(pcap)
                throw .liveFailed(interface: interface, message: "time stamp type \(name) is not supported here (see capture -J -i \(interface))")
            }
        }
        let status = pcap_activate(pcap)
        if status < 0 {
            let detail = String(cString: pcap_geterr(pcap))
            let message = detail.isEmpty ? String(cString: pcap_statustostr(status)) : detail
            pcap_close(pcap)
            switch status {
            case PCAP_ERROR_PERM_DENIED, PCAP_ERROR_PROMISC_PERM_DENIED:
                throw .permissionDenied(interface: interface, message: message)
            case PCAP_ERROR_NO_SUCH_DEVICE:
                throw .noSuchDevice(interface: interface, message: message)
            default:
                throw .liveFailed(interface: interface, message: message)
            }
        }
        if let direction = options.direction {
            let value: pcap_direction_t = switch direction {
            case .incoming: PCAP_D_IN
            case .outgoing: PCAP_D_OUT
            case .both: PCAP_D_INOUT
            }
            if pcap_setdirection(pcap, value) != 0 {
                let message = String(cString: pcap_geterr(pcap))
                pcap_close(pcap)
                throw .liveFailed(interface: interface, message: "cannot select direction \(direction.rawValue): \(message)")
            }
        }
        if let name = options.dataLinkName {
            let value = pcap_datalink_name_to_val(name)
            guard value >= 0 else {
                pcap_close(pcap)
                throw .liveFailed(interface: interface, message: "invalid data link type \(name) (see capture -L -i \(interface))")
            }
            if pcap_set_datalink(pcap, value) != 0 {
                let message = String(cString: pcap_geterr(pcap))
                pcap_close(pcap)
                throw .liveFailed(interface: interface, message: "\(message) (see capture -L -i \(interface))")
            }
        } else if interface == "any" {
            // Cooked v2 keeps the interface index and direction of each packet (tcpdump does the same);
            // stay with v1 if this libpcap cannot.
            _ = pcap_set_datalink(pcap, 276)
        }
        return CaptureHandle(pcap: pcap, source: interface, isLive: true)
    }

    /// The snap length: the most bytes of one packet the capture keeps.
    public var snapshotLength: Int { Int(pcap_snapshot(pcap)) }

    /// Compiles and installs a BPF filter in tcpdump syntax. The error carries libpcap's message.
    public func setFilter(_ expression: String) throws(CaptureError) {
        var program = bpf_program()
        if pcap_compile(pcap, &program, expression, 1, PCAP_NETMASK_UNKNOWN) != 0 {
            throw .badFilter(expression: expression, message: String(cString: pcap_geterr(pcap)))
        }
        defer { pcap_freecode(&program) }
        if pcap_setfilter(pcap, &program) != 0 {
            throw .badFilter(expression: expression, message: String(cString: pcap_geterr(pcap)))
        }
    }

    /// Asks a running `forEachPacket` to return after the packet in hand. Safe from any thread.
    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
        pcap_breakloop(pcap)
    }

    public var isStopRequested: Bool { stopRequested.load(ordering: .relaxed) }

    /// Calls `body` for each packet until the file ends, `stop()` is called, or `limit` packets were delivered.
    /// A broken file throws `CaptureError.readFailed` after every packet before the break was delivered.
    public func forEachPacket(limit: Int? = nil, _ body: (CapturedPacket) throws -> Void) throws {
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        // Classic pcap offsets are counted (exact, and works on pipes); asking stdio each packet would cost a
        // syscall. For pcapng the error reports where reading stopped.
        var countedOffset: Int64 = 24
        // A local count (written back on exit) keeps class-property access checks out of the per-packet path.
        var count = packetsRead
        defer { packetsRead = count }
        let limit = limit ?? Int.max
        var drainUntil: Int?
        var breakSeen = false
        while true {
            if stopRequested.load(ordering: .relaxed) {
                // Stopped (the command ended, Ctrl-C): what the kernel already holds for us was captured before
                // the stop and is read too, without waiting for more, for at most 100 ms (traffic may go on).
                guard isLive else { return }
                var clock = timespec()
                clock_gettime(CLOCK_MONOTONIC, &clock)
                let now = clock.tv_sec * 1_000_000_000 + clock.tv_nsec
                if drainUntil == nil {
                    drainUntil = now + 100_000_000
                    var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
                    if pcap_setnonblock(pcap, 1, &errorBuffer) != 0 { return }
                }
                if now > drainUntil! { return }
            }
            if count >= limit { return }
            let status = pcap_next_ex(pcap, &header, &data)
            switch status {
            case 1:
                guard let header, let data else { continue }
                count += 1
                let caplen = Int(header.pointee.caplen)
                countedOffset += 16 + Int64(caplen)
                let packet = CapturedPacket(
                    index: count,
                    // Opened with nanosecond precision, so tv_usec holds nanoseconds; a hostile file's can exceed
                    // a second (and Int32), so whole seconds are carried rather than the value truncated.
                    timestamp: Timestamp(seconds: Int64(header.pointee.ts.tv_sec),
                                         subsecondNanoseconds: Int64(header.pointee.ts.tv_usec)),
                    originalLength: Int(header.pointee.len),
                    bytes: UnsafeRawBufferPointer(start: data, count: caplen))
                try body(packet)
            case 0:
                if drainUntil != nil { return }  // stopped, and nothing more is waiting
                continue  // live read timeout: nothing arrived
            case PCAP_ERROR_BREAK:
                // pcap_breakloop's flag is reported once and then cleared: a stopped live capture drains first.
                if isLive && !breakSeen && stopRequested.load(ordering: .relaxed) {
                    breakSeen = true
                    continue
                }
                return  // end of file, or pcap_breakloop
            default:
                let message = String(cString: pcap_geterr(pcap))
                if isLive { throw CaptureError.liveFailed(interface: source, message: message) }
                let offset = isClassicPcap ? countedOffset : fileBytesRead
                throw CaptureError.readFailed(packetIndex: count + 1, byteOffset: offset, message: message)
            }
        }
    }

    /// libpcap's counters for a live capture; nil offline.
    public func statistics() -> CaptureStatistics? {
        guard isLive else { return nil }
        var stats = pcap_stat()
        guard pcap_stats(pcap, &stats) == 0 else { return nil }
        return CaptureStatistics(receivedByFilter: UInt64(stats.ps_recv), droppedByKernel: UInt64(stats.ps_drop),
                                 droppedByInterface: UInt64(stats.ps_ifdrop))
    }

    /// Bytes of the file read so far, for progress reports (offline, seekable input only).
    public var fileBytesRead: Int64? {
        guard !isLive, let file = pcap_file(pcap) else { return nil }
        let offset = ftello(file)
        return offset >= 0 ? Int64(offset) : nil
    }

    /// Opens a pcap writer whose link type and snap length follow this handle, and its timestamps
    /// `savesNanoseconds`. libpcap's dumper takes the precision of the handle it is opened on, so it is opened on a
    /// dead one of the precision wanted.
    public func makeWriter(path: String) throws(CaptureError) -> PacketWriter {
        let precision = UInt32(savesNanoseconds ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO)
        guard let template = pcap_open_dead_with_tstamp_precision(pcap_datalink(pcap), pcap_snapshot(pcap), precision) else {
            throw .writeFailed(path: path, message: "libpcap could not make a writer")
        }
        guard let dumper = pcap_dump_open(template, path) else {
            let message = String(cString: pcap_geterr(template))
            pcap_close(template)
            throw .writeFailed(path: path, message: message)
        }
        return PacketWriter(dumper: dumper, template: template, path: path, nanoseconds: savesNanoseconds)
    }
}

/// Writes packets to a pcap file (`-` for standard output). Flushed and closed when it goes away.
public final class PacketWriter {
    private let dumper: OpaquePointer
    private let template: OpaquePointer
    private let nanoseconds: Bool
    public let path: String

    fileprivate init(dumper: OpaquePointer, template: OpaquePointer, path: String, nanoseconds: Bool) {
        self.dumper = dumper
        self.template = template
        self.path = path
        self.nanoseconds = nanoseconds
    }

    deinit {
        pcap_dump_close(dumper)
        pcap_close(template)
    }

    public func write(_ packet: CapturedPacket) {
        var header = pcap_pkthdr()
        header.ts.tv_sec = Int(packet.timestamp.seconds)
        header.ts.tv_usec = Int(nanoseconds ? packet.timestamp.nanoseconds : packet.timestamp.nanoseconds / 1000)
        header.caplen = UInt32(packet.bytes.count)
        header.len = UInt32(packet.originalLength)
        guard let base = packet.bytes.baseAddress else { return }
        pcap_dump(UnsafeMutableRawPointer(dumper).assumingMemoryBound(to: UInt8.self), &header,
                  base.assumingMemoryBound(to: UInt8.self))
    }

    /// Flushes buffered records to the file; throws if the file cannot take them.
    /// Bytes in the file so far (what tcpdump's -C compares with its limit).
    public var bytesWritten: Int64 { Int64(pcap_dump_ftell64(dumper)) }

    public func flush() throws(CaptureError) {
        if pcap_dump_flush(dumper) != 0 { throw .writeFailed(path: path, message: String(cString: strerror(errno))) }
    }
}

/// A NUL-terminated C buffer as a String.
func string(_ buffer: [CChar]) -> String {
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
