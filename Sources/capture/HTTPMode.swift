import ArgumentParser
import PacketCapture

/// `--http`: paired HTTP/1.x exchanges. The HTTP pipeline (FlowReassembly -> HTTPDecoding -> Reports) plugs in
/// here; it owns this file. Until it lands, say so plainly rather than printing nothing.
func runHTTPMode(handle: CaptureHandle, source: SourceOptions, output: OutputOptions) throws {
    printError("--http is not available in this build yet; run without --http for packet lines.")
    throw ExitCode(1)
}
