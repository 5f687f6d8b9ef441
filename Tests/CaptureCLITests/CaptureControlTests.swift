import Foundation
import Testing
import TestSupport

/// tcpdump's capture-side flags that work on files: -F, -C/-W rotation naming, -U, --version, and refusals.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: captureBinary), "needs the built capture binary"))
struct CaptureControlTests {
    let sample = TestEnvironment.fixtures.appendingPathComponent("http-binary-300k.pcap").path

    @Test func filterFileMeansTheSameAsTheExpression() throws {
        let file = temporaryPath(".bpf")
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "# only the server's side\ntcp src port 80  # responses\n".write(toFile: file, atomically: true, encoding: .utf8)
        let fromFile = try capture(["-r", sample, "-F", file])
        let inline = try capture(["-r", sample, "tcp", "src", "port", "80"])
        #expect(fromFile.status == 0, "\(fromFile.stderrText)")
        #expect(fromFile.stdoutText == inline.stdoutText)
        #expect(!fromFile.stdoutText.isEmpty)
    }

    @Test func sizeRotationUsesTcpdumpsNames() throws {
        let folder = temporaryPath("-rotate")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let plain = try capture(["-r", sample, "-w", folder + "/plain", "-C", "1"])
        #expect(plain.status == 0, "\(plain.stderrText)")
        let limited = try capture(["-r", sample, "-w", folder + "/ring", "-C", "1", "-W", "10"])
        #expect(limited.status == 0, "\(limited.stderrText)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        // 300 KB of HTTP in 1 MB files: one file each; the -W form is numbered from 0.
        #expect(names == ["plain", "ring0"], "\(names)")
        #expect(lines(try capture(["-r", folder + "/plain"]).stdoutText) == lines(try capture(["-r", sample]).stdoutText))
    }

    @Test(.enabled(if: TestEnvironment.hasProgram("tcpdump"), "needs tcpdump"),
          .enabled(if: TestEnvironment.publicFixtures != nil, "needs ../shared/fixtures/public beside the checkout"))
    func sizeRotationSplitsLikeTcpdump() throws {
        // -C counts millions of bytes; a 1 MB limit over a 2.2 MB public capture must split where tcpdump does.
        let big = publicFixture("pcap2har_out-of-order.pcap")
        let ours = temporaryPath("-ours"), theirs = temporaryPath("-theirs")
        for folder in [ours, theirs] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        defer { for folder in [ours, theirs] { try? FileManager.default.removeItem(atPath: folder) } }
        // That capture ends in a cut record: both tools save what comes before it and exit 1.
        let ourRun = try capture(["-r", big, "-w", ours + "/f", "-C", "1", "-W", "3"])
        let theirRun = try tcpdump(["-r", big, "-w", theirs + "/f", "-C", "1", "-W", "3", "-Z", "root"])
        #expect(ourRun.status == theirRun.status)
        let ourNames = try FileManager.default.contentsOfDirectory(atPath: ours).sorted()
        #expect(ourNames == (try FileManager.default.contentsOfDirectory(atPath: theirs).sorted()))
        for name in ourNames {
            #expect(lines(try capture(["-r", ours + "/" + name]).stdoutText) == lines(try capture(["-r", theirs + "/" + name]).stdoutText), "\(name)")
        }
    }

    /// A directory where a file belongs (a filter file, a key log) is named as such, never read as empty.
    @Test(arguments: [(["-F", "DIR"], 64, "cannot read filter file DIR: Is a directory"),
                      (["--http", "--keylog", "DIR"], 1, "key log DIR is a directory")])
    func directoryGivenAsAFileSaysSo(arguments: [String], status: Int32, message: String) throws {
        let directory = temporaryPath(".d")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try capture(["-r", sample] + arguments.map { $0 == "DIR" ? directory : $0 })
        #expect(result.status == status, "\(arguments): \(result.stderrText)")
        #expect(result.stderrText.contains(message.replacingOccurrences(of: "DIR", with: directory)), "\(result.stderrText)")
        #expect(result.stdoutText.isEmpty)
    }

    @Test func versionNamesTheToolAndLibpcap() throws {
        let result = try capture(["--version"])
        #expect(result.status == 0)
        #expect(result.stdoutText.hasPrefix("capture (TapKit) "))
        #expect(result.stdoutText.contains("libpcap version"))
    }

    static let refused: [[String]] = [
        ["-p"], ["-Q", "in"], ["-y", "EN10MB"], ["--immediate-mode"], ["-j", "host"], ["-L"], ["-J"],
        ["-C", "1"], ["-W", "3", "-w", "/tmp/x", "-C", "0"], ["-F", "/dev/null", "tcp"], ["-B", "9999999999"],
    ]

    @Test(arguments: refused)
    func flagsThatWouldDoNothingAreRefused(arguments: [String]) throws {
        let result = try capture(["-r", sample] + arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderrText)")
    }

    /// A negative number is called what it is, as tcpdump does, not a missing value.
    @Test(arguments: [(["-c", "-1"], "-c needs a positive packet count."), (["-w", "/tmp/x", "-C", "-1"], "-C needs a positive size"),
                      (["-w", "/tmp/x", "-G", "-5"], "-G needs a positive number of seconds."),
                      (["-w", "/tmp/x", "-C", "1", "-W", "-2"], "-W needs a positive file count.")])
    func negativeNumbersAreNamed(arguments: [String], message: String) throws {
        let result = try capture(["-r", sample] + arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderrText)")
        #expect(result.stderrText.contains(message), "\(result.stderrText)")
    }

    /// -Z is carried out in packet mode only: the other modes refuse it rather than keep root without a word.
    @Test(arguments: [["-r", "SAMPLE", "--http"], ["-r", "SAMPLE", "--stats"], ["-r", "SAMPLE", "--follow", "0"],
                      ["--", "true"]])
    func privilegeDropIsRefusedWhereItWouldNotHappen(arguments: [String]) throws {
        let result = try capture(["-Z", "nobody"] + arguments.map { $0 == "SAMPLE" ? sample : $0 })
        #expect(result.status == 64, "\(arguments): \(result.stderrText)")
        let mode = arguments == ["--", "true"] ? "-- COMMAND" : arguments.first { $0.hasPrefix("--") }!
        #expect(result.stderrText.contains("-Z drops root once a packet capture and its -w file are open; \(mode) does not support it."),
                "\(result.stderrText)")
        #expect(result.stdoutText.isEmpty)
    }
}

/// -L and -J list what an interface offers exactly as tcpdump does (opening an interface needs root).
@Suite(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: captureBinary) && TestEnvironment.hasProgram("tcpdump"),
                "needs root (opens the lo interface), the built capture binary and tcpdump"))
struct InterfaceListingTests {
    @Test(arguments: ["-L", "-J"])
    func listingMatchesTcpdump(flag: String) throws {
        let ours = try capture([flag, "-i", "lo"])
        let theirs = try tcpdump([flag, "-i", "lo"])
        #expect(ours.status == 0)
        // tcpdump writes these lists to standard error.
        #expect(ours.stderrText == theirs.stderrText)
        #expect(ours.stderrText.contains(" (use option -"))
    }
}
