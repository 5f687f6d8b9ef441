import Dispatch
import Foundation
import PacketCapture

/// Turns SIGINT and SIGTERM into a clean stop of the capture (so counts are printed and files flushed),
/// and ignores SIGPIPE so a closed output pipe is a write error we handle, not a crash.
final class SignalSession: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []

    init(handle: CaptureHandle) {
        signal(SIGPIPE, SIG_IGN)
        for number in [SIGINT, SIGTERM, SIGHUP] {  // a closed terminal ends the capture cleanly too
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handle.stop() }
            source.resume()
            sources.append(source)
        }
    }

    func finish() {
        for source in sources { source.cancel() }
        sources.removeAll()
    }
}
