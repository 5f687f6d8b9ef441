import ArgumentParser
import Foundation
import PacketCapture
import SystemSupport

extension CaptureDirection: ExpressibleByArgument {}

/// tcpdump's capture-side flags: live capture settings, filter file, file rotation, dropping root.
/// Each means what it means to tcpdump; those that would do nothing in the chosen mode are refused.
struct CaptureControlOptions: ParsableArguments {
    @Flag(name: [.customShort("p"), .customLong("no-promiscuous-mode")],
          help: "Do not put the interface into promiscuous mode.")
    var noPromiscuous = false

    @Option(name: [.customShort("Q"), .customLong("direction")],
            help: ArgumentHelp("Capture only packets received (in), sent (out) or both (inout).", valueName: "in|out|inout"))
    var direction: CaptureDirection?

    @Flag(name: [.customShort("U"), .customLong("packet-buffered")],
          help: "Write each packet as soon as it is captured: to the -w file, or to standard output.")
    var packetBuffered = false

    @Option(name: .customShort("F"), help: ArgumentHelp("Read the filter expression from this file ('#' starts a comment).", valueName: "file"))
    var filterFile: String?

    @Option(name: [.customShort("y"), .customLong("linktype")],
            help: ArgumentHelp("Capture with this link-layer header type (names from -L).", valueName: "type"))
    var dataLinkType: String?

    @Flag(name: [.customShort("L"), .customLong("list-data-link-types")],
          help: "List the link-layer header types the -i interface offers, then exit.")
    var listDataLinkTypes = false

    @Flag(name: .customLong("immediate-mode"), help: "Deliver each packet as it arrives, not in kernel-buffered batches.")
    var immediateMode = false

    @Option(name: [.customShort("j"), .customLong("time-stamp-type")],
            help: ArgumentHelp("Take timestamps from this source (names from -J).", valueName: "type"))
    var timestampType: String?

    @Flag(name: [.customShort("J"), .customLong("list-time-stamp-types")],
          help: "List the timestamp sources the -i interface offers, then exit.")
    var listTimestampTypes = false

    // -C, -G and -W take the next word as getopt does, so a negative number is called that, not a missing value.
    @Option(name: .customShort("C"), parsing: .unconditional, help: ArgumentHelp("With -w: start a new file once the current one is larger than this many million bytes (FILE, FILE1, FILE2, ...).", valueName: "millions of bytes"))
    var fileSizeMegabytes: Int?

    @Option(name: .customShort("G"), parsing: .unconditional, help: ArgumentHelp("With -w: start a new file every this many seconds; FILE may hold strftime(3) codes such as %H%M%S.", valueName: "seconds"))
    var rotateSeconds: Int?

    @Option(name: .customShort("W"), parsing: .unconditional, help: ArgumentHelp("With -C: keep at most this many files, reused in turn (FILE0...); with -G: stop after this many files.", valueName: "count"))
    var fileCount: Int?

    /// For `condition run`, which starts its command once this capture is capturing: created when the handle is
    /// live (a packet socket bound is not yet capturing: libpcap sets up its ring after binding).
    @Option(name: .customLong("ready-file"), help: ArgumentHelp("Create this file once capturing.", visibility: .hidden))
    var readyFile: String?

    @Option(name: [.customShort("Z"), .customLong("relinquish-privileges")],
            help: ArgumentHelp("When run as root, switch to this user once the capture and output files are open ('root' keeps root).", valueName: "user"))
    var user: String?

    /// Flags that only change a live capture.
    var liveOnlyFlag: String? {
        if noPromiscuous { return "-p" }
        if direction != nil { return "-Q" }
        if dataLinkType != nil { return "-y" }
        if immediateMode { return "--immediate-mode" }
        if timestampType != nil { return "-j" }
        return nil
    }

    func validate(live: Bool, writeFile: String?, http: Bool, filterGiven: Bool) throws {
        if !live, let flag = liveOnlyFlag {
            throw ValidationError("\(flag) changes a live capture; it does nothing when reading a file with -r.")
        }
        if (listDataLinkTypes || listTimestampTypes) && !live {
            throw ValidationError("\(listDataLinkTypes ? "-L" : "-J") lists what an interface offers: give it -i INTERFACE.")
        }
        if filterFile != nil && filterGiven {
            throw ValidationError("Give the filter either with -F FILE or on the command line, not both.")
        }
        if rotates || fileCount != nil {
            guard writeFile != nil, writeFile != "-" else {
                throw ValidationError("-C, -G and -W rotate the -w file: give -w FILE.")
            }
            if http { throw ValidationError("-C, -G and -W work with -w in packet mode, not with --http.") }
        }
        if fileCount != nil && !rotates { throw ValidationError("-W needs -C or -G: it counts rotated files.") }
        if let value = fileSizeMegabytes, value <= 0 { throw ValidationError("-C needs a positive size in millions of bytes.") }
        if let value = rotateSeconds, value <= 0 { throw ValidationError("-G needs a positive number of seconds.") }
        if let value = fileCount, value <= 0 { throw ValidationError("-W needs a positive file count.") }
    }

    /// The filter from -F: the file's text with `#` comments removed, as tcpdump's read_infile does.
    func filterFromFile() throws -> String? {
        guard let path = filterFile else { return nil }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ValidationError("cannot read filter file \(path): \(systemReason(error))")
        }
        let text = String(decoding: data, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "" }
            .joined(separator: " ").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func apply(to options: inout LiveOptions) {
        if noPromiscuous { options.promiscuous = false }
        options.direction = direction
        options.dataLinkName = dataLinkType
        options.timestampType = timestampType
        if immediateMode { options.immediate = true }
    }

    /// -C or -G: the -w file is one of several.
    var rotates: Bool { fileSizeMegabytes != nil || rotateSeconds != nil }

    var rotation: RotatingWriter.Limits {
        RotatingWriter.Limits(megabytes: fileSizeMegabytes, seconds: rotateSeconds, fileCount: fileCount,
                              packetBuffered: packetBuffered)
    }

    /// `-Z USER` as root: drop group list, group and user (in that order, so the user change comes last), after
    /// the capture handle and every output file are open. `-Z root` keeps root.
    func dropPrivilegesIfAsked() throws {
        guard let user, user != "root", geteuid() == 0 else { return }
        guard let entry = getpwnam(user) else {
            throw ValidationError("-Z \(user): no such user.")
        }
        let uid = entry.pointee.pw_uid, gid = entry.pointee.pw_gid
        guard initgroups(user, gid) == 0, setgid(gid) == 0, setuid(uid) == 0 else {
            throw ValidationError("-Z \(user): cannot switch to that user: \(String(cString: strerror(errno)))")
        }
    }
}
