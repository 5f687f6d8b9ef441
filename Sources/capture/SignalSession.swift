import Dispatch
import Foundation
import PacketCapture
import Synchronization

/// Turns SIGINT and SIGTERM into a clean stop of the capture (so counts are printed and files flushed),
/// and ignores SIGPIPE so a closed output pipe is a write error we handle, not a crash.
final class SignalSession: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    /// A signal stopped the capture (rather than the end of a file): the live view then stops too.
    private let signalled = Atomic<Bool>(false)
    var interrupted: Bool { signalled.load(ordering: .sequentiallyConsistent) }

    init(handle: CaptureHandle) {
        signal(SIGPIPE, SIG_IGN)
        for number in [SIGINT, SIGTERM, SIGHUP] {  // a closed terminal ends the capture cleanly too
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                signalled.store(true, ordering: .sequentiallyConsistent)
                handle.stop()
            }
            source.resume()
            sources.append(source)
        }
    }

    func finish() {
        for source in sources { source.cancel() }
        sources.removeAll()
    }
}
